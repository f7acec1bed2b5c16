import type { Compressor } from './transport.js';

/** Gzip through the Compression Streams API (browsers, Deno, Node 18+); undefined where it is missing. */
export const compressionStreamGzip: Compressor = async (text) => {
  if (typeof CompressionStream !== 'function' || typeof Blob !== 'function' || typeof Response !== 'function') return undefined;
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
};
