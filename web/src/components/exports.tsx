import { useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/failure';
import { formatCount, isoDay } from '../lib/format';
import { type DownloadProgress, saveFile, streamedDownload } from '../lib/streamed-download';
import { DateInput } from './date-input';
import { FailureNotice } from './states';

type Dataset = 'events' | 'feedbacks' | 'users';
type Format = 'csv' | 'jsonl' | 'parquet';

const DATASETS: Record<Dataset, { label: string; formats: Format[]; help: string }> = {
  events: {
    label: 'Tracked events',
    formats: ['csv', 'jsonl', 'parquet'],
    help: 'Within your plan’s metrics window, as the metrics count them.',
  },
  feedbacks: { label: 'Feedback items', formats: ['csv', 'jsonl'], help: 'Every item, merged ones included.' },
  users: { label: 'SDK users', formats: ['csv', 'jsonl'], help: 'Every registered user with their MRR.' },
};
const FORMAT_LABELS: Record<Format, string> = { csv: 'CSV', jsonl: 'JSON lines', parquet: 'Parquet' };

type Run =
  | { state: 'idle' }
  | { state: 'running'; dataset: Dataset; progress: DownloadProgress; startedAt: number }
  | { state: 'done'; dataset: Dataset; progress: DownloadProgress; fileName: string; seconds: number }
  | { state: 'cancelled' }
  | { state: 'failed'; failure: ApiFailure };

/**
 * The project's exports (GET /projects/:id/exports/…, docs/data-rights.md), downloaded by the page
 * with the signed-in token and shown while they stream: bytes (and rows) received so far, then
 * the file is handed to the browser. One export at a time; it can be cancelled.
 */
export function Exports({ projectId }: { projectId: string }) {
  const [dataset, setDataset] = useState<Dataset>('feedbacks');
  const [format, setFormat] = useState<Format>('csv');
  const [from, setFrom] = useState(isoDay(29));
  const [to, setTo] = useState(isoDay(0));
  const [run, setRun] = useState<Run>({ state: 'idle' });
  const abort = useRef<AbortController | null>(null);
  const formats = DATASETS[dataset].formats;
  const chosenFormat = formats.includes(format) ? format : 'csv';

  const start = async (event: Event) => {
    event.preventDefault();
    const controller = new AbortController();
    abort.current = controller;
    const startedAt = performance.now();
    const query = new URLSearchParams({ format: chosenFormat });
    if (dataset === 'events') {
      query.set('date_from', from);
      query.set('date_to', to);
    }
    setRun({ state: 'running', dataset, progress: { bytes: 0, rows: null }, startedAt });
    try {
      const result = await streamedDownload(`/projects/${projectId}/exports/${dataset}?${query}`, {
        countRows: chosenFormat === 'jsonl',
        signal: controller.signal,
        onProgress: (progress) => setRun({ state: 'running', dataset, progress, startedAt }),
      });
      saveFile(result.blob, result.fileName);
      const seconds = (performance.now() - startedAt) / 1000;
      setRun({ state: 'done', dataset, progress: result.progress, fileName: result.fileName, seconds });
    } catch (error) {
      if (controller.signal.aborted) setRun({ state: 'cancelled' });
      else setRun({ state: 'failed', failure: ApiFailure.of(error) });
    } finally {
      abort.current = null;
    }
  };

  return (
    <section class="card" aria-labelledby="exports-heading">
      <h2 id="exports-heading">Exports</h2>
      <p class="muted">Take your data out as files. {DATASETS[dataset].help}</p>
      <form class="filters" aria-label="Export" onSubmit={start}>
        <div class="field">
          <label for="export-dataset">Data</label>
          <select id="export-dataset" value={dataset} onChange={(e) => setDataset(e.currentTarget.value as Dataset)}>
            {(Object.keys(DATASETS) as Dataset[]).map((value) => (
              <option value={value} key={value}>
                {DATASETS[value].label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="export-format">Format</label>
          <select id="export-format" value={chosenFormat} onChange={(e) => setFormat(e.currentTarget.value as Format)}>
            {formats.map((value) => (
              <option value={value} key={value}>
                {FORMAT_LABELS[value]}
              </option>
            ))}
          </select>
        </div>
        {dataset === 'events' && (
          <>
            <div class="field">
              <label for="export-from">Events from</label>
              <DateInput id="export-from" required value={from} onChange={setFrom} />
            </div>
            <div class="field">
              <label for="export-to">to</label>
              <DateInput id="export-to" required value={to} onChange={setTo} />
            </div>
          </>
        )}
        <button type="submit" class="primary" disabled={run.state === 'running'}>
          Export
        </button>
        {run.state === 'running' && (
          <button type="button" onClick={() => abort.current?.abort()}>
            Cancel
          </button>
        )}
      </form>
      <ExportState run={run} />
    </section>
  );
}

function ExportState({ run }: { run: Run }) {
  if (run.state === 'failed') return <FailureNotice failure={run.failure} planHint="Exports of events follow the plan’s metrics window." />;
  return (
    <div role="status" aria-live="polite" class="export-state" data-testid="export-state">
      {run.state === 'running' && (
        <>
          <progress aria-label={`Exporting ${DATASETS[run.dataset].label.toLowerCase()}`} />
          <span>
            Exporting {DATASETS[run.dataset].label.toLowerCase()}: {describe(run.progress)} received so far…
          </span>
        </>
      )}
      {run.state === 'done' && (
        <span>
          Done: {describe(run.progress)} in {run.seconds.toFixed(1)} s, saved as <code>{run.fileName}</code>.
        </span>
      )}
      {run.state === 'cancelled' && <span>Export cancelled; nothing was saved.</span>}
    </div>
  );
}

function describe(progress: DownloadProgress): string {
  const size = formatBytes(progress.bytes);
  return progress.rows === null ? size : `${formatCount(progress.rows)} ${progress.rows === 1 ? 'row' : 'rows'} (${size})`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
