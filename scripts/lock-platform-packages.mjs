// Restores package-lock.json entries for optional per-platform binaries that this machine's npm
// registry does not serve (e.g. @chdb/lib-darwin-arm64). `npm install` leaves them out of the
// lock when it cannot fetch them, and `npm ci` then refuses the lock as out of sync. The entries
// carry os/cpu, so npm ci on Linux x64 skips them without downloading anything.
// Run after `npm install`: node scripts/lock-platform-packages.mjs
//
// npm itself then rewrites the lock (--package-lock-only): entries written here in another order,
// or without the `dev` flag npm derives, made the next `npm install` of every fresh clone rewrite
// the lock (+191/-175 lines), so a clean checkout was dirty after its first command. .ci/run checks
// that `npm install` leaves the committed lock as it is.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const platforms = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64': { os: ['linux'], cpu: ['arm64'] },
  'linux-arm': { os: ['linux'], cpu: ['arm'] },
  'linux-x64': { os: ['linux'], cpu: ['x64'] },
  'win32-x64': { os: ['win32'], cpu: ['x64'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
  'win32-arm64': { os: ['win32'], cpu: ['arm64'] },
  'win32-arm64-msvc': { os: ['win32'], cpu: ['arm64'] },
  'win32-ia32-msvc': { os: ['win32'], cpu: ['ia32'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'linux-arm-gnueabihf': { os: ['linux'], cpu: ['arm'], libc: ['glibc'] },
  'linux-ppc64-gnu': { os: ['linux'], cpu: ['ppc64'], libc: ['glibc'] },
  'linux-s390x-gnu': { os: ['linux'], cpu: ['s390x'], libc: ['glibc'] },
  'android-arm64': { os: ['android'], cpu: ['arm64'] },
  'android-x64': { os: ['android'], cpu: ['x64'] },
};
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    const suffix = Object.keys(platforms)
      .sort((a, b) => b.length - a.length)
      .find((p) => name.endsWith(p));
    if (!suffix) {
      console.warn(`skipped ${name} (required by ${path || 'the project'}): unknown platform`);
      continue;
    }
    lock.packages[key] = { version, optional: true, ...platforms[suffix] };
    added += 1;
    console.log(`added ${key}@${version}`);
  }
}
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`${added} entries added`);
execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { stdio: 'inherit' });
