import { z } from 'zod';
import { timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentClickhouseCredential } from './credentials.presenter.js';

// Credentials of the read-only ClickHouse HTTP interface (docs/clickhouse-interface.md)

const credentialFields = {
  id: uuid,
  username: z.uuid().meta({
    description:
      'The user name to connect with: the project id. Every credential of a project has the same one; the password tells them apart.',
  }),
  created_at: timestamp,
  last_used_at: timestamp.nullable().meta({
    description: 'When the credential last authenticated a request to the ClickHouse interface (to the minute); null if never.',
  }),
};

export const ClickhouseCredentialResponse = z.object(credentialFields).meta({
  id: 'ClickhouseCredential',
  description: 'A credential of the read-only ClickHouse HTTP interface, without its password.',
});

export const NewClickhouseCredentialResponse = z
  .object({
    ...credentialFields,
    password: z.string().meta({
      description:
        'The password of the ClickHouse interface (HTTP Basic, X-ClickHouse-Key, or the `password` URL parameter). Shown only here: it is stored as a hash. It reads this project’s analytics and nothing else; it is not an API key or an admin token.',
    }),
  })
  .meta({ id: 'NewClickhouseCredential', description: 'A new credential of the ClickHouse interface, with its password.' });

export type ClickhouseCredentialResponseChecks = [
  Expect<
    SameShape<
      ReturnType<typeof presentClickhouseCredential>,
      Out<typeof ClickhouseCredentialResponse> | Out<typeof NewClickhouseCredentialResponse>
    >
  >,
];
