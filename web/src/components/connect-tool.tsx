import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import type { ApiFailure } from '../api/failure';
import { PLAN_LABELS, useAccount } from '../lib/account';
import { connectionSnippets, INTERFACE_PATH, PASSWORD_VARIABLE, type ToolSnippet } from '../lib/connection-snippets';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { ScrollRegion } from './scroll-region';
import { CopyButton, Empty, FailureNotice, Loading } from './states';
import './connect-tool.css';
import { GUIDES } from '../lib/guides';

type Credential = Schemas['ClickhouseCredential'];
type NewCredential = Schemas['NewClickhouseCredential'];

const WHO_MAY =
  'Credentials are created and revoked with the account owner’s token, or a team member’s while the account is on the Team plan.';

/**
 * "Connect a tool": the credentials of the project's read-only ClickHouse HTTP interface
 * (GET/POST/DELETE /projects/:id/clickhouse-credentials; docs/clickhouse-interface.md) and the
 * settings each tool needs, filled in. A new password is kept in this component's state only,
 * until the owner says it is copied: it is never stored, and the API cannot show it again.
 */
export function ConnectTool({ projectId }: { projectId: string }) {
  const account = useAccount();
  const credentials = useResource(
    () => unwrap(api.GET('/projects/{id}/clickhouse-credentials', { params: { path: { id: projectId } } })),
    [projectId],
  );
  const action = useAction();
  const [created, setCreated] = useState<NewCredential | null>(null);
  const createButton = useRef<HTMLButtonElement>(null);
  // A member's token works only on Team (the API refuses it otherwise); say so instead of offering a button that cannot work.
  const mayManage = !account || account.role === 'owner' || account.plan === 'team';

  const create = () =>
    action.run(async () => {
      const credential = await unwrap(api.POST('/projects/{id}/clickhouse-credentials', { params: { path: { id: projectId } } }));
      setCreated(credential);
      credentials.reload();
    });
  const revoke = (credential: Credential) => {
    const when = formatDateTime(credential.created_at);
    if (!window.confirm(`Revoke the credential created ${when}? Tools that use it are refused from their next request.`)) return;
    void action.run(async () => {
      await unwrap(
        api.DELETE('/projects/{id}/clickhouse-credentials/{credentialId}', {
          params: { path: { id: projectId, credentialId: credential.id } },
        }),
      );
      if (created?.id === credential.id) setCreated(null);
      credentials.reload();
      // The row and its button are gone: the focus goes back to where a new credential is made.
      createButton.current?.focus();
    });
  };

  return (
    <section class="card connect-tool" aria-labelledby="connect-heading">
      <h2 id="connect-heading">Connect a tool</h2>
      <p>
        Tools that speak ClickHouse’s HTTP interface (<code>@clickhouse/client</code>, notebooks, Grafana, Metabase, DBeaver) read this
        project’s analytics with a credential. It only reads, and sees what this console sees: the same tables, only this project’s rows,
        your plan’s window and limits.
      </p>
      {!mayManage && (
        <p class="notice notice-plan" role="note">
          {WHO_MAY} This account is on {account ? PLAN_LABELS[account.plan] : 'another plan'}.
        </p>
      )}
      <p class="button-row">
        <button type="button" class="primary" ref={createButton} onClick={() => void create()} disabled={action.busy || !mayManage}>
          {action.busy ? 'Working…' : 'Create a credential'}
        </button>
      </p>
      {action.failure && <CredentialFailure failure={action.failure} />}
      {created && (
        <NewPassword
          credential={created}
          onDone={() => {
            setCreated(null);
            createButton.current?.focus();
          }}
        />
      )}

      <section aria-labelledby="credentials-heading" aria-busy={credentials.state === 'loading'}>
        <h3 id="credentials-heading">Credentials</h3>
        {credentials.state === 'failed' && <CredentialFailure failure={credentials.failure} onRetry={credentials.reload} />}
        {credentials.state === 'loading' && !credentials.data && <Loading what="credentials" />}
        {credentials.data && credentials.data.length === 0 && <Empty>No credential yet: create one to connect a tool.</Empty>}
        {credentials.data && credentials.data.length > 0 && (
          <CredentialTable credentials={credentials.data} onRevoke={revoke} busy={action.busy || !mayManage} />
        )}
      </section>

      <section aria-labelledby="snippets-heading">
        <h3 id="snippets-heading">Connection settings</h3>
        <Snippets username={created?.username ?? credentials.data?.[0]?.username ?? projectId} password={created?.password ?? null} />
      </section>
    </section>
  );
}

/**
 * A refusal in words: a 403 says who may manage credentials (or that the project is suspended,
 * which no token changes); the rest as every page shows them.
 */
function CredentialFailure({ failure, onRetry }: { failure: ApiFailure; onRetry?: () => void }) {
  if (failure.status !== 403) return <FailureNotice failure={failure} {...(onRetry ? { onRetry } : {})} />;
  const suspended = /suspended/.test(failure.reason);
  return (
    <div class="notice notice-error" role="alert">
      <p>
        <strong>Not allowed</strong> ({failure.reason}).{' '}
        {suspended ? 'The operator has suspended this project: its credentials cannot be listed or changed until it is resumed.' : WHO_MAY}
      </p>
    </div>
  );
}

/** The password of the credential just created, shown once; the focus moves to it so a screen reader hears it is there. */
function NewPassword({ credential, onDone }: { credential: NewCredential; onDone: () => void }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.focus(), [credential.id]);
  return (
    <section class="notice notice-secret connect-secret" aria-labelledby="new-password-heading" tabIndex={-1} ref={box}>
      <h3 id="new-password-heading">Copy the password now: it will not be shown again</h3>
      <p>
        It is stored only as a hash. If it is lost, create another credential and revoke this one. The snippets below hold it until you put
        it away.
      </p>
      <dl class="connect-settings">
        <div class="connect-setting">
          <dt>Username</dt>
          <dd>
            <code data-testid="new-username">{credential.username}</code>
          </dd>
        </div>
        <div class="connect-setting">
          <dt>Password</dt>
          <dd class="secret-row">
            <code class="secret" data-testid="new-password">
              {credential.password}
            </code>
            <CopyButton text={credential.password} />
          </dd>
        </div>
      </dl>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}

function CredentialTable({ credentials, onRevoke, busy }: { credentials: Credential[]; onRevoke: (c: Credential) => void; busy: boolean }) {
  return (
    <ScrollRegion label="Credentials of the ClickHouse interface">
      <table class="data-table" data-testid="credential-table">
        <thead>
          <tr>
            <th scope="col">Username</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {credentials.map((credential) => (
            <tr key={credential.id} data-credential-id={credential.id}>
              <td>
                <code>{credential.username}</code>
              </td>
              <td>{formatDateTime(credential.created_at)}</td>
              <td>{credential.last_used_at ? formatDateTime(credential.last_used_at) : <span class="muted">Never</span>}</td>
              <td class="connect-actions">
                <button type="button" class="danger" onClick={() => onRevoke(credential)} disabled={busy}>
                  Revoke<span class="visually-hidden"> the credential created {formatDateTime(credential.created_at)}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/**
 * One tab per tool (WAI-ARIA tabs: arrow keys, Home and End move between them, the active one
 * alone in the Tab order), each with its snippet and a copy button.
 */
function Snippets({ username, password }: { username: string; password: string | null }) {
  const snippets = connectionSnippets({ origin: window.location.origin, username, password });
  const [selected, setSelected] = useState(snippets[0]?.id ?? '');
  const tabs = useRef<Record<string, HTMLButtonElement | null>>({});
  const current = snippets.find((snippet) => snippet.id === selected) ?? snippets[0];
  const move = (from: number, key: string) => {
    const last = snippets.length - 1;
    const to =
      key === 'Home' ? 0 : key === 'End' ? last : key === 'ArrowRight' ? (from === last ? 0 : from + 1) : from === 0 ? last : from - 1;
    const id = snippets[to]?.id;
    if (!id) return;
    setSelected(id);
    tabs.current[id]?.focus();
  };
  if (!current) return null;
  return (
    <div class="connect-snippets">
      {password === null && (
        <p class="muted field-note">
          The password is shown only when a credential is created: the snippets read it from <code>{PASSWORD_VARIABLE}</code> or ask for it.
        </p>
      )}
      <div role="tablist" aria-label="Tool to connect" class="connect-tabs">
        {snippets.map((snippet, index) => (
          <button
            type="button"
            role="tab"
            key={snippet.id}
            id={`connect-tab-${snippet.id}`}
            aria-selected={snippet.id === current.id}
            aria-controls={`connect-panel-${snippet.id}`}
            tabIndex={snippet.id === current.id ? 0 : -1}
            ref={(element) => {
              tabs.current[snippet.id] = element;
            }}
            onClick={() => setSelected(snippet.id)}
            onKeyDown={(e) => {
              if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) {
                e.preventDefault();
                move(index, e.key);
              }
            }}
          >
            {snippet.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`connect-panel-${current.id}`} aria-labelledby={`connect-tab-${current.id}`} class="connect-panel">
        {/* Keyed by its text: "Copied." belongs to the text that was copied, not to the next tab or password. */}
        <SnippetBody key={current.text} snippet={current} />
      </div>
      <p class="muted field-note connect-note">
        The interface is at <code>{INTERFACE_PATH}</code> of this service. A tool that cannot take a path connects to the interface’s own
        port instead, at <code>/</code>, if the operator has opened it (<code>CLICKHOUSE_INTERFACE_PORT</code>), or to{' '}
        <code>/?pathname={INTERFACE_PATH}</code> of this service (a tool that takes only a URL, such as DbGate, reads a path as the database
        name). See{' '}
        <a href={GUIDES.clickhouseInterface} target="_blank" rel="noopener">
          the ClickHouse interface guide
        </a>{' '}
        for that port, DbGate’s fields, the catalogue, the supported formats and settings, and what is refused.
      </p>
    </div>
  );
}

function SnippetBody({ snippet }: { snippet: ToolSnippet }) {
  const head = (description: string) => (
    <div class="connect-snippet-head">
      <p>{description}</p>
      <p class="secret-row">
        <CopyButton text={snippet.text} />
      </p>
    </div>
  );
  if (snippet.kind === 'code') {
    return (
      <>
        {head(snippet.language)}
        <ScrollRegion label={`${snippet.label} snippet (${snippet.language})`}>
          <pre class="connect-code" data-testid="connect-snippet">
            <code>{snippet.text}</code>
          </pre>
        </ScrollRegion>
      </>
    );
  }
  return (
    <>
      {head(snippet.intro)}
      <dl class="connect-settings" data-testid="connect-snippet">
        {snippet.settings.map(({ name, value, placeholder }) => (
          <div key={name} class="connect-setting">
            <dt>{name}</dt>
            <dd>{placeholder ? <span class="muted">{value}</span> : <code>{value}</code>}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}
