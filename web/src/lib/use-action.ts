import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/failure';

/** One change at a time: busy while it runs, its failure kept for the section to show. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const run = async (change: () => Promise<void>) => {
    setBusy(true);
    setFailure(null);
    try {
      await change();
    } catch (error) {
      setFailure(ApiFailure.of(error));
    } finally {
      setBusy(false);
    }
  };
  return { busy, failure, run };
}
