// `node --import tsx scripts/openapi-json.ts > openapi.json`: the OpenAPI document the service
// serves (openApiYaml, parsed back), as JSON with every object's keys sorted. Two versions of the
// code give equal output exactly when they describe the same API, whatever order they register
// paths, methods or components in: diff the two files to review a refactor of the routes.
import { parse } from 'yaml';
import { openApiYaml } from '../src/api/openapi/document.js';

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, inner]) => [key, sortKeys(inner)]));
}

process.stdout.write(`${JSON.stringify(sortKeys(parse(openApiYaml())), null, 2)}\n`);
