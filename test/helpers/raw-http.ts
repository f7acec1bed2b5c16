import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** An answer read off the socket: status, every header line as sent, the (inflated) body text. */
export type RawResponse = { status: number; headers: Headers; text: string; body: any };

/**
 * Sends `request` byte for byte (the request line and headers exactly as a client library writes
 * them, repeated headers included) and reads one answer. For replaying what another client sends,
 * which fetch would normalise (it merges repeated headers and re-encodes the path).
 */
export function rawRequest(base: string, request: string, timeoutMs = 30_000): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms to:\n${request}`));
    }, timeoutMs);
    const finish = (response: RawResponse) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(response);
    };
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const parsed = parseResponse(Buffer.concat(chunks));
      if (parsed) finish(parsed);
    });
    socket.on('end', () => {
      const parsed = parseResponse(Buffer.concat(chunks), true);
      if (parsed) finish(parsed);
      else reject(new Error(`the connection closed before a complete answer: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    });
    socket.write(request);
  });
}

/** A complete response in `data`, or null while it is still arriving. */
function parseResponse(data: Buffer, ended = false): RawResponse | null {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const [statusLine = '', ...lines] = data.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = data.subarray(headEnd + 4);
  if (headers.get('transfer-encoding')?.includes('chunked')) {
    const decoded = dechunk(body);
    if (!decoded) return ended ? null : null;
    body = decoded;
  } else if (headers.has('content-length')) {
    const length = Number(headers.get('content-length'));
    if (body.length < length) return null;
    body = body.subarray(0, length);
  } else if (!ended) {
    return null;
  }
  if (headers.get('content-encoding') === 'gzip') body = gunzipSync(body);
  const text = body.toString('utf8');
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the test says what it expected
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text, body: parsed };
}

function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
