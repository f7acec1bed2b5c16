import { useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { Empty, FailureNotice, Loading, OneTimeSecret } from './states';

export const MEMBERS_PLAN = 'Team members are part of the Team plan.';

/** The project's team members, each added with a token of their own, shown once. */
export function Members({ projectId }: { projectId: string }) {
  const list = useResource(() => unwrap(api.GET('/projects/{id}/members', { params: { path: { id: projectId } } })), [projectId]);
  const [email, setEmail] = useState('');
  const [token, setToken] = useState<{ email: string; value: string } | null>(null);
  const action = useAction();

  const add = (event: Event) => {
    event.preventDefault();
    return action.run(async () => {
      const member = await unwrap(
        api.POST('/projects/{id}/members', { params: { path: { id: projectId } }, body: { email: email.trim() } }),
      );
      setToken({ email: member.email, value: member.admin_token });
      setEmail('');
      list.reload();
    });
  };
  const remove = (member: Schemas['Member']) => {
    if (!window.confirm(`Remove ${member.email}? Their token stops working at once.`)) return;
    return action.run(async () => {
      await unwrap(api.DELETE('/projects/{id}/members/{memberId}', { params: { path: { id: projectId, memberId: member.id } } }));
      list.reload();
    });
  };

  return (
    <section class="card" aria-labelledby="members-heading">
      <h2 id="members-heading">Team members</h2>
      <p class="muted">Each member gets a token of their own to sign in here and to call the API. {MEMBERS_PLAN}</p>
      {token && <OneTimeSecret label={`Token for ${token.email}`} value={token.value} onDone={() => setToken(null)} />}
      {list.state === 'failed' && <FailureNotice failure={list.failure} onRetry={list.reload} planHint={MEMBERS_PLAN} />}
      {list.state === 'loading' && !list.data && <Loading what="members" />}
      {list.data && list.data.length === 0 && <Empty>No team member yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <ul class="rows">
          {list.data.map((member) => (
            <li key={member.id} class="row">
              <span>
                {member.email} <span class="muted">since {formatDateTime(member.created_at)}</span>
              </span>
              <button type="button" onClick={() => remove(member)} disabled={action.busy}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} class="filters" aria-label="Add a team member">
        <div class="field field-grow">
          <label for="member-email">Email</label>
          <input id="member-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        <button type="submit" class="primary" disabled={action.busy}>
          Add member
        </button>
      </form>
      {action.failure && <FailureNotice failure={action.failure} planHint={MEMBERS_PLAN} />}
    </section>
  );
}
