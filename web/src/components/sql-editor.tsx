import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { type SQLNamespace, sql } from '@codemirror/lang-sql';
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers, placeholder } from '@codemirror/view';
import { useEffect, useRef } from 'preact/hooks';
import { ClickHouseSQL, clickHouseWord } from '../lib/clickhouse-dialect';

/** The readable tables and their columns (name → ClickHouse type), as the engine described them. */
export type SqlSchema = { table: string; columns: { name: string; type: string }[] }[];

/**
 * Completion of tables and columns: each column carries its type, and a table's columns also
 * complete bare (most queries read one table).
 */
function namespace(schema: SqlSchema): SQLNamespace {
  return Object.fromEntries(
    schema.map(({ table, columns }) => [
      table,
      {
        self: { label: table, type: 'type', detail: 'table' },
        children: columns.map((column) => ({ label: column.name, type: 'property', detail: column.type })),
      },
    ]),
  );
}

function language(schema: SqlSchema) {
  return sql({
    dialect: ClickHouseSQL,
    schema: namespace(schema),
    defaultTable: schema[0]?.table,
    keywordCompletion: clickHouseWord,
  });
}

/**
 * The page's palette inside the editor: the editor lives in a shadow root (below), where the
 * page's stylesheet does not reach. Text and gutter colours keep AA contrast.
 */
const theme = EditorView.theme({
  '&': { backgroundColor: '#fff', color: '#1c2030', fontSize: '0.92rem', minHeight: '9rem', maxHeight: '24rem', borderRadius: '8px' },
  '&.cm-focused': { outline: 'none', boxShadow: '0 0 0 3px #8da2f0' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', lineHeight: '1.5', overflow: 'auto' },
  '.cm-content': { padding: '0.5rem 0', minHeight: '9rem' },
  '.cm-gutters': { backgroundColor: '#f5f6fa', color: '#545b6b', borderRight: '1px solid #d9dce5', borderRadius: '8px 0 0 8px' },
  '.cm-activeLine': { backgroundColor: '#f1f4ff' },
  '.cm-placeholder': { color: '#545b6b' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: '#2f4ac0', color: '#fff' },
  '.cm-completionDetail': { color: 'inherit', opacity: '1' },
});

/**
 * The SQL editor: CodeMirror 6 with ClickHouse highlighting, completion of keywords, functions and
 * the schema's tables and columns, Ctrl/Cmd+Enter to run. Tab leaves the editor (the keyboard is
 * never trapped); Escape closes the completion list.
 *
 * It is mounted in a shadow root on purpose: CodeMirror styles itself with a `<style>` element in
 * a document, which the dashboard's CSP (`style-src 'self'`, no inline style) refuses, while in a
 * shadow root it uses a constructed stylesheet (adoptedStyleSheets), which CSP does not govern.
 */
export function SqlEditor({
  loaded,
  onChange,
  onRun,
  schema,
  label,
}: {
  /**
   * Text put in the editor from outside (a saved query opened), replacing what is there when its
   * `version` changes. What the owner types only goes out through onChange: echoing it back in
   * would overwrite keystrokes typed since, whenever the page renders later than they arrive.
   */
  loaded: { text: string; version: number };
  onChange: (text: string) => void;
  /** Called with the editor's own text: the page's copy may be a keystroke behind. */
  onRun: (text: string) => void;
  schema: SqlSchema;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const schemaSlot = useRef(new Compartment());
  // The editor is made once; these always call the page's latest callbacks.
  const latest = useRef({ onChange, onRun });
  latest.current = { onChange, onRun };

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const root = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
    const editor = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc: loaded.text,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          highlightActiveLine(),
          autocompletion(),
          syntaxHighlighting(defaultHighlightStyle),
          schemaSlot.current.of(language(schema)),
          EditorView.lineWrapping,
          placeholder('SELECT … FROM events'),
          EditorView.contentAttributes.of({ 'aria-label': label }),
          theme,
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: (editor) => {
                  latest.current.onRun(editor.state.doc.toString());
                  return true;
                },
              },
            ]),
          ),
          keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
          EditorView.domEventHandlers({
            // Typing over a selection of several lines: Chromium's own editing would merge the lines
            // first, writing style attributes that the CSP refuses (a console error per keystroke).
            // The editor replaces the selection itself instead, as it does for paste and delete.
            beforeinput(event, editor) {
              if (event.inputType !== 'insertText' || !event.data || editor.composing) return false;
              if (editor.state.selection.ranges.every((range) => range.empty)) return false;
              event.preventDefault();
              editor.dispatch(editor.state.replaceSelection(event.data), { scrollIntoView: true, userEvent: 'input.type' });
              return true;
            },
          }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // Made once per mount; loaded text and schema changes are dispatched below.
  }, []);

  useEffect(() => {
    const editor = view.current;
    const text = loaded.text;
    if (editor && editor.state.doc.toString() !== text) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text }, selection: { anchor: text.length } });
    }
  }, [loaded.version]);

  useEffect(() => {
    view.current?.dispatch({ effects: schemaSlot.current.reconfigure(language(schema)) });
  }, [schema]);

  return <div class="sql-editor" ref={host} data-testid="sql-editor" />;
}
