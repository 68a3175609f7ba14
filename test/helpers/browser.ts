import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { brotliDecompressSync, createBrotliDecompress } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';

/**
 * Which Chromium the browser tests drive (docs/decisions.md, Tests), in this order:
 * 1. `CHROMIUM_PATH`, when set (a wrong path is an error, not a silent fallback);
 * 2. Debian's `/usr/bin/chromium`, when installed;
 * 3. the headless Chromium shipped inside the npm package `@sparticuz/chromium` (a
 *    devDependency, Linux x64 only), unpacked once into `$TMPDIR/herald-chromium-<version>`.
 * With none of them the browser tests are skipped with one line saying how to get one,
 * except under `CI=true`, where a missing browser fails the run.
 */

export interface ChromiumChoice {
  executablePath: string;
  /** Where it came from, for the skip line and the test of this chooser. */
  source: 'CHROMIUM_PATH' | 'system' | 'npm package';
  /** Extra environment for the browser process (the packaged one brings its own NSS libraries). */
  env: Record<string, string>;
}

export interface ChooserOptions {
  env?: NodeJS.ProcessEnv;
  systemPath?: string;
  /** The directory holding `@sparticuz/chromium`'s package.json; undefined: not installed. */
  packageDir?: string | undefined;
  /** Where the packaged browser is unpacked (default: the OS temporary directory). */
  cacheRoot?: string;
  platform?: string;
  arch?: string;
  /** Whether the C library is glibc (the packaged binary needs it; Alpine's musl will not do). */
  glibc?: boolean;
}

const PACKAGE = '@sparticuz/chromium';

/** The browser the tests should use, or undefined when none can be had here. */
export async function chooseChromium(options: ChooserOptions = {}): Promise<ChromiumChoice | undefined> {
  const env = options.env ?? process.env;
  if (env.CHROMIUM_PATH) {
    if (!existsSync(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH is ${env.CHROMIUM_PATH}, which does not exist`);
    return { executablePath: env.CHROMIUM_PATH, source: 'CHROMIUM_PATH', env: {} };
  }
  const systemPath = options.systemPath ?? '/usr/bin/chromium';
  if (existsSync(systemPath)) return { executablePath: systemPath, source: 'system', env: {} };
  const packageDir = 'packageDir' in options ? options.packageDir : installedPackageDir();
  // The package ships one binary, for Linux on x64 with glibc.
  if (
    packageDir === undefined ||
    (options.platform ?? platform()) !== 'linux' ||
    (options.arch ?? arch()) !== 'x64' ||
    !(options.glibc ?? hasGlibc())
  )
    return undefined;
  return unpackPackagedChromium(packageDir, options.cacheRoot ?? tmpdir());
}

function hasGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

/** Where npm put `@sparticuz/chromium` (its exports hide package.json: found from its entry file). */
export function installedPackageDir(): string | undefined {
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve(PACKAGE));
  } catch {
    return undefined;
  }
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    if (
      existsSync(join(dir, 'package.json')) &&
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name === PACKAGE
    )
      return dir;
  }
  return undefined;
}

/**
 * Unpacks the packaged browser (about 200 MB, a few seconds) into a directory of its own,
 * named by the package version, and reuses it afterwards. Safely: it is unpacked into a fresh
 * private directory and renamed into place whole, so a half-written one is never used; and an
 * existing directory is used only if it is ours and no one else can write to it (the temporary
 * directory is shared: another user must not be able to plant a binary we would run).
 */
async function unpackPackagedChromium(packageDir: string, cacheRoot: string): Promise<ChromiumChoice> {
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const target = join(cacheRoot, `herald-chromium-${version}`);
  if (!existsSync(target)) {
    const staging = mkdtempSync(join(cacheRoot, `herald-chromium-${version}.partial-`));
    try {
      await pipeline(
        createReadStream(join(packageDir, 'bin', 'chromium.br')),
        createBrotliDecompress(),
        createWriteStream(join(staging, 'chromium'), { mode: 0o700 }),
      );
      extractLibraries(brotliDecompressSync(readFileSync(join(packageDir, 'bin', 'al2023.tar.br'))), join(staging, 'lib'));
      chmodSync(staging, 0o755);
      renameSync(staging, target);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      // Another run renamed its copy into place first: use that one.
      if (!existsSync(target)) throw err;
    }
  }
  const executablePath = join(target, 'chromium');
  for (const path of [target, executablePath, join(target, 'lib')]) assertPrivate(path);
  return { executablePath, source: 'npm package', env: { LD_LIBRARY_PATH: join(target, 'lib') } };
}

function assertPrivate(path: string): void {
  const stat = lstatSync(path);
  const uid = process.getuid?.();
  if (stat.isSymbolicLink() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) {
    throw new Error(
      `${path} is not owned by this user or is writable by others: refusing to run a browser from it (delete it to unpack afresh)`,
    );
  }
}

/**
 * The package's shared libraries (NSS, NSPR, expat: what its binary links beyond glibc) from
 * its tar archive. Only regular files are taken, each by its base name into `dir`, and a name
 * is checked before it is written: nothing in the archive can write outside `dir`.
 */
function extractLibraries(tar: Buffer, dir: string): void {
  mkdirSync(dir, { mode: 0o755 });
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const name = basename(field(0, 100));
    if ((type === '0' || type === '') && /^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(name)) {
      writeFileSync(join(dir, name), tar.subarray(offset + 512, offset + 512 + size), { mode: 0o755, flag: 'wx' });
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
}

/** The flags every test browser starts with: headless, and no calls home (the network is closed). */
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const NO_BROWSER_HINT =
  "no Chromium for the browser tests: install Debian's (apt-get install chromium), set CHROMIUM_PATH, or run npm ci on Linux x64 (@sparticuz/chromium)";

/**
 * What a browser test file needs: `skip` for its describe() (false when a browser is there),
 * and `launch`. Under CI=true a missing browser throws instead of skipping.
 */
export async function browserForTests(options: ChooserOptions = {}): Promise<{ skip: string | false; launch(): Promise<Browser> }> {
  const choice = await chooseChromium(options);
  if (!choice && (options.env ?? process.env).CI === 'true') throw new Error(`CI=true and ${NO_BROWSER_HINT}`);
  return {
    skip: choice ? false : NO_BROWSER_HINT,
    launch() {
      if (!choice) throw new Error(NO_BROWSER_HINT);
      return chromium.launch({
        executablePath: choice.executablePath,
        args: CHROMIUM_ARGS,
        env: { ...process.env, ...choice.env } as Record<string, string>,
      });
    },
  };
}
