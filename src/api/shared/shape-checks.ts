import type { z } from 'zod';

/*
 * Compile-time guards: each response schema has the shape of the code that builds the body. Each
 * *.responses.ts lists its checks as `Expect<SameShape<Built, Out<typeof Schema>>>`; a field added
 * to, dropped from or retyped in a presenter (or in the schema) fails `tsc` until both sides agree.
 * test/api/openapi.test.ts validates real responses against the served document on top of this.
 */

type KeysOf<T> = T extends unknown ? keyof T : never;
export type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type SameShape<Built, Schema> =
  Mutual<Built, Schema> extends true ? (Mutual<KeysOf<Built>, KeysOf<Schema>> extends true ? true : false) : false;
export type Expect<T extends true> = T;
export type Out<S extends z.ZodType> = z.output<S>;
export type Result<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
