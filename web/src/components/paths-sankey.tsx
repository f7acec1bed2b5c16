import { type SankeyGraph, type SankeyLink, type SankeyNode, sankey, sankeyLinkHorizontal } from 'd3-sankey';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatCount, formatPercent } from '../lib/format';
import { type PathEdge, type PathNode, usersText as users } from '../lib/paths-graph';

type NodeExtra = PathNode;
type LinkExtra = { edge: PathEdge };
type LaidNode = SankeyNode<NodeExtra, LinkExtra>;
type LaidLink = SankeyLink<NodeExtra, LinkExtra>;

/** Hues that each keep 3:1 or better against white (WCAG's floor for graphics), one per event name. */
const PALETTE = ['#3b5bdb', '#0b7285', '#c2255c', '#2b8a3e', '#d9480f', '#5f3dc4', '#1864ab', '#a61e4d', '#5c7c0a', '#862e9c'];

/** A column per step: wide enough for a label, so depth 6 scrolls sideways on a phone rather than overlap. */
const COLUMN_MIN = 170;
const ROW = 54;
const MARGIN = { top: 12, right: 8, bottom: 12, left: 8 };
const NODE_WIDTH = 14;
const LABEL_GAP = 6;
const LABEL_FONT = '600 13px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
/** The tooltip's widest (.paths-tooltip: 18rem at 15px). */
const TOOLTIP_WIDTH = 270;

type Hover = { x: number; y: number; lines: string[] };

/**
 * The moves as a Sankey drawing: a column per step, a node per event name at that step (its
 * height the users at it), a band per move (its width the users who made it). d3-sankey lays it
 * out; the SVG is drawn here so nodes are focusable buttons (Enter or Space selects one, as a
 * click does) and the text is real text. Hovering or focusing shows a move's or a node's numbers.
 */
export function PathsSankey({
  nodes,
  edges,
  selected,
  onSelect,
}: {
  nodes: PathNode[];
  edges: PathEdge[];
  selected: string | null;
  onSelect: (node: PathNode) => void;
}) {
  const frame = useRef<HTMLElement>(null);
  const [available, setAvailable] = useState(0);
  const [hover, setHover] = useState<Hover | null>(null);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setAvailable(element.clientWidth));
    observer.observe(element);
    setAvailable(element.clientWidth);
    return () => observer.disconnect();
  }, []);

  const steps = Math.max(2, ...nodes.map((n) => n.step));
  const perColumn = Math.max(1, ...Array.from({ length: steps }, (_, i) => nodes.filter((n) => n.step === i + 1).length));
  // Every label sits right of its bar: a column is as wide as its longest label, and the last
  // column's labels get a margin of their own, so no label runs into the next column or off the edge.
  const labels = useMemo(() => nodes.map((node) => ({ step: node.step, width: labelWidth(node) })), [nodes]);
  const column = Math.max(COLUMN_MIN, ...labels.map((label) => NODE_WIDTH + label.width + LABEL_GAP * 2));
  const right = Math.max(MARGIN.right, ...labels.filter((label) => label.step === steps).map((label) => label.width + LABEL_GAP * 2));
  const width = Math.max(available, (steps - 1) * column + right + MARGIN.left + NODE_WIDTH);
  const height = Math.min(1200, Math.max(240, perColumn * ROW)) + MARGIN.top + MARGIN.bottom;
  const colours = useMemo(() => colourByName(nodes), [nodes]);

  const graph = useMemo<SankeyGraph<NodeExtra, LinkExtra> | null>(() => {
    if (available === 0 || nodes.length === 0) return null;
    const layout = sankey<NodeExtra, LinkExtra>()
      .nodeId((node) => node.id)
      .nodeAlign((node) => node.step - 1)
      .nodeWidth(NODE_WIDTH)
      .nodePadding(18)
      .extent([
        [MARGIN.left, MARGIN.top],
        [width - right, height - MARGIN.bottom],
      ]);
    return layout({
      // The start event's node holds the users who stopped there too: d3 draws it that tall.
      nodes: nodes.map((node) => ({ ...node, fixedValue: node.users })),
      links: edges.map((edge) => ({ source: `${edge.step - 1}:${edge.from}`, target: `${edge.step}:${edge.to}`, value: edge.users, edge })),
    });
  }, [nodes, edges, width, height, right, available]);

  const link = sankeyLinkHorizontal<NodeExtra, LinkExtra>();
  const show = (event: MouseEvent | FocusEvent, lines: string[]) => {
    const box = frame.current?.getBoundingClientRect();
    if (!box || !frame.current) return;
    const target = event.currentTarget as Element;
    const point =
      event instanceof MouseEvent
        ? { x: event.clientX, y: event.clientY }
        : { x: target.getBoundingClientRect().right, y: target.getBoundingClientRect().top };
    const x = point.x - box.left + frame.current.scrollLeft;
    // Near the right edge the tooltip opens to the left of the pointer, inside the drawing.
    const flip = point.x - box.left > box.width - TOOLTIP_WIDTH - 24;
    setHover({ x: flip ? Math.max(0, x - TOOLTIP_WIDTH - 12) : x + 12, y: point.y - box.top + 12, lines });
  };

  return (
    <section
      class={`paths-sankey${selected !== null ? ' has-selection' : ''}`}
      ref={frame}
      aria-label="Paths drawing"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: on a narrow screen the drawing scrolls sideways, and a keyboard must scroll it too (axe scrollable-region-focusable).
      tabIndex={0}
      data-testid="paths-sankey"
      data-drawn={graph ? `${nodes.length}:${edges.length}` : undefined}
    >
      {graph && (
        // biome-ignore lint/a11y/useSemanticElements: a group of the SVG's node buttons, named; a fieldset cannot sit in an SVG.
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="group"
          aria-label="Paths drawing: select a node to see where its users came from and went"
        >
          {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: nothing in it takes the focus; the bands are hidden because the moves table says the same. */}
          <g class="paths-links" aria-hidden="true">
            {(graph.links as LaidLink[]).map((l) => {
              const source = l.source as LaidNode;
              return (
                // biome-ignore lint/a11y/noStaticElementInteractions: hover shows a band's numbers to the mouse; the keyboard reads them in the moves table.
                <path
                  key={`${l.edge.step}:${l.edge.from}>${l.edge.to}`}
                  d={link(l) ?? undefined}
                  class={`paths-link${selected !== null && (source.id === selected || (l.target as LaidNode).id === selected) ? ' is-related' : ''}`}
                  stroke={colours.get(source.name)}
                  stroke-width={Math.max(1, l.width ?? 1)}
                  data-move={`${l.edge.step}:${l.edge.from}>${l.edge.to}`}
                  onMouseMove={(e) => show(e, moveLines(l.edge, source))}
                  onMouseLeave={() => setHover(null)}
                />
              );
            })}
          </g>
          <g class="paths-nodes">
            {(graph.nodes as LaidNode[]).map((node) => {
              const x0 = node.x0 ?? 0;
              const x1 = node.x1 ?? 0;
              const y0 = node.y0 ?? 0;
              const y1 = node.y1 ?? 0;
              // Starts with the label's visible text ("checkout 2"), as axe's label-content-name-mismatch asks.
              const label = `${node.name} ${users(node.users)}, step ${node.step}`;
              const activate = () => onSelect(node);
              return (
                // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>; role and keys make it one.
                <g
                  key={node.id}
                  class={`paths-node${selected === node.id ? ' is-selected' : ''}`}
                  role="button"
                  tabIndex={0}
                  aria-label={label}
                  aria-pressed={selected === node.id}
                  data-node={node.id}
                  onClick={activate}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' || e.key === ' ') {
                      e.preventDefault();
                      activate();
                    }
                  }}
                  onMouseMove={(e) => show(e, nodeLines(node))}
                  onMouseLeave={() => setHover(null)}
                  onFocus={(e) => show(e, nodeLines(node))}
                  onBlur={() => setHover(null)}
                >
                  <rect x={x0} y={y0} width={x1 - x0} height={Math.max(2, y1 - y0)} fill={colours.get(node.name)} rx={2} />
                  <text x={x1 + LABEL_GAP} y={(y0 + y1) / 2} dy="0.35em" class="paths-label">
                    <tspan class="paths-label-name">{node.name}</tspan> <tspan class="paths-label-count">{formatCount(node.users)}</tspan>
                  </text>
                </g>
              );
            })}
          </g>
        </svg>
      )}
      {hover && (
        <div class="paths-tooltip" role="presentation" style={{ left: `${hover.x}px`, top: `${hover.y}px` }} data-testid="paths-tooltip">
          {hover.lines.map((line) => (
            <div key={line}>{line}</div>
          ))}
        </div>
      )}
    </section>
  );
}

function moveLines(edge: PathEdge, source: LaidNode): string[] {
  return [
    `${edge.from} → ${edge.to}`,
    `Step ${edge.step - 1} to ${edge.step}: ${users(edge.users)}`,
    `${formatPercent(source.users > 0 ? edge.users / source.users : null)} of ${edge.from}'s users at step ${edge.step - 1}`,
  ];
}

function nodeLines(node: PathNode): string[] {
  const lines = [`${node.name} at step ${node.step}`, users(node.users)];
  if (node.step > 1) lines.push(`${formatCount(node.usersIn)} came from the step before`);
  lines.push(`${formatCount(node.usersOut)} went on`, 'Select it for where they came from and went');
  return lines;
}

let measuring: CanvasRenderingContext2D | null | undefined;

/** A label's drawn width ("checkout 2"), measured with the label's font; an estimate where canvas is missing. */
function labelWidth(node: PathNode): number {
  const text = `${node.name} ${formatCount(node.users)}`;
  if (measuring === undefined) measuring = document.createElement('canvas').getContext('2d');
  if (!measuring) return text.length * 8;
  measuring.font = LABEL_FONT;
  return Math.ceil(measuring.measureText(text).width);
}

/** One colour per event name, in the order names first appear (stable for one answer). */
function colourByName(nodes: PathNode[]): Map<string, string> {
  const colours = new Map<string, string>();
  for (const node of nodes) {
    if (!colours.has(node.name)) colours.set(node.name, PALETTE[colours.size % PALETTE.length] as string);
  }
  return colours;
}
