import { formatCount, formatPercent } from '../lib/format';
import { type Flow, type NodeFlows, type PathEdge, type PathNode, type PathsResult, usersText } from '../lib/paths-graph';
import { ScrollRegion } from './scroll-region';

/** The moves of the drawing as rows: what a keyboard or a screen reader reads instead of the bands. */
export function PathsEdgesTable({ edges, nodes }: { edges: PathEdge[]; nodes: PathNode[] }) {
  const usersAt = new Map(nodes.map((node) => [node.id, node.users]));
  return (
    <ScrollRegion label="Moves between events">
      <table class="data-table paths-table" data-testid="paths-edges">
        <caption class="visually-hidden">
          Each move from one event to the next, with its users and their share of the users at the event it left.
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              Step
            </th>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col" class="num">
              Users
            </th>
            <th scope="col" class="num">
              Share of “from”
            </th>
          </tr>
        </thead>
        <tbody>
          {edges.map((edge) => {
            const from = usersAt.get(`${edge.step - 1}:${edge.from}`) ?? 0;
            return (
              <tr key={`${edge.step}:${edge.from}>${edge.to}`}>
                <td class="num">
                  {edge.step - 1} → {edge.step}
                </td>
                <th scope="row">{edge.from}</th>
                <td>{edge.to}</td>
                <td class="num">{formatCount(edge.users)}</td>
                <td class="num">{formatPercent(from > 0 ? edge.users / from : null)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** The whole paths with the most users (the API's top 10). */
export function PathsTopTable({ answer }: { answer: PathsResult }) {
  return (
    <ScrollRegion label="Top paths">
      <table class="data-table paths-table" data-testid="paths-top">
        <caption class="visually-hidden">
          The whole paths most users took, each with its users and their share of all users with a path.
        </caption>
        <thead>
          <tr>
            <th scope="col">Path</th>
            <th scope="col" class="num">
              Users
            </th>
            <th scope="col" class="num">
              Share
            </th>
          </tr>
        </thead>
        <tbody>
          {answer.paths.map((path) => (
            <tr key={path.events.join('\u0000')}>
              <th scope="row" class="paths-path">
                {path.events.join(' → ')}
              </th>
              <td class="num">{formatCount(path.users)}</td>
              <td class="num">{formatPercent(answer.users > 0 ? path.users / answer.users : null)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** A selected node: its users, where they came from one step before and where they went one step after. */
export function PathsNodeDetails({ flows, onClose }: { flows: NodeFlows; onClose: () => void }) {
  const { node, before, after, stopped } = flows;
  return (
    <section class="paths-details" aria-labelledby="paths-details-heading" data-testid="paths-details">
      <div class="paths-details-head">
        <h3 id="paths-details-heading">
          {node.name} at step {node.step}: {usersText(node.users)}
        </h3>
        <button type="button" class="link-button" onClick={onClose}>
          Close
        </button>
      </div>
      <div class="paths-flows">
        <FlowTable
          testId="paths-before"
          title={`Before: step ${node.step - 1}`}
          empty={node.step === 1 ? 'The paths begin here.' : 'No move into it among those listed.'}
          flows={before}
          total={node.usersIn}
          column="From"
        />
        <FlowTable
          testId="paths-after"
          title={`After: step ${node.step + 1}`}
          empty="Nobody went on from here among the moves listed."
          flows={after}
          total={node.usersOut}
          column="To"
          stopped={stopped}
        />
      </div>
    </section>
  );
}

function FlowTable({
  testId,
  title,
  empty,
  flows,
  total,
  column,
  stopped,
}: {
  testId: string;
  title: string;
  empty: string;
  flows: Flow[];
  total: number;
  column: string;
  stopped?: number;
}) {
  return (
    <div class="paths-flow">
      <h4>{title}</h4>
      {flows.length === 0 && !stopped ? (
        <p class="muted">{empty}</p>
      ) : (
        <table class="data-table paths-table" data-testid={testId}>
          <thead>
            <tr>
              <th scope="col">{column}</th>
              <th scope="col" class="num">
                Users
              </th>
            </tr>
          </thead>
          <tbody>
            {flows.map((flow) => (
              <tr key={flow.name}>
                <th scope="row">{flow.name}</th>
                <td class="num">{formatCount(flow.users)}</td>
              </tr>
            ))}
            {stopped !== undefined && stopped > 0 && (
              <tr class="paths-stopped">
                <th scope="row">(path ends here)</th>
                <td class="num">{formatCount(stopped)}</td>
              </tr>
            )}
          </tbody>
          {flows.length > 1 && (
            <tfoot>
              <tr>
                <th scope="row">All</th>
                <td class="num">{formatCount(total)}</td>
              </tr>
            </tfoot>
          )}
        </table>
      )}
    </div>
  );
}
