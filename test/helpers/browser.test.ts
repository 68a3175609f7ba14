import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { browserForTests, chooseChromium, installedPackageDir, NO_BROWSER_HINT } from './browser.js';

/** The chooser of the browser tests' Chromium (test/helpers/browser.ts), on its own. */
const root = mkdtempSync(join(tmpdir(), 'herald-browser-test-'));
const nowhere = join(root, 'no-such-chromium');
const fakeBinary = join(root, 'fake-chromium');
writeFileSync(fakeBinary, '#!/bin/sh\n', { mode: 0o755 });
const packageDir = installedPackageDir();
const packagedHere = packageDir !== undefined && platform() === 'linux' && arch() === 'x64';

after(() => rmSync(root, { recursive: true, force: true }));

describe('choosing the Chromium of the browser tests', () => {
  test('CHROMIUM_PATH comes first, even when a system Chromium is there', async () => {
    const choice = await chooseChromium({ env: { CHROMIUM_PATH: fakeBinary }, systemPath: '/bin/sh' });
    assert.deepEqual(choice, { executablePath: fakeBinary, source: 'CHROMIUM_PATH', env: {} });
  });

  test('a CHROMIUM_PATH that does not exist is an error, not a quiet fallback', async () => {
    await assert.rejects(
      chooseChromium({ env: { CHROMIUM_PATH: nowhere }, systemPath: fakeBinary }),
      /CHROMIUM_PATH is .*no-such-chromium, which does not exist/,
    );
  });

  test('then the system Chromium, when it is installed', async () => {
    const choice = await chooseChromium({ env: {}, systemPath: fakeBinary, packageDir: undefined });
    assert.deepEqual(choice, { executablePath: fakeBinary, source: 'system', env: {} });
  });

  test('with neither and no package, none: skipped with one line saying how to get one', async () => {
    assert.equal(await chooseChromium({ env: {}, systemPath: nowhere, packageDir: undefined }), undefined);
    const tests = await browserForTests({ env: {}, systemPath: nowhere, packageDir: undefined });
    assert.equal(tests.skip, NO_BROWSER_HINT);
    assert.doesNotMatch(NO_BROWSER_HINT, /\n/);
    assert.match(NO_BROWSER_HINT, /apt-get install chromium.*CHROMIUM_PATH.*npm ci/);
  });

  test('under CI=true a missing browser fails instead of skipping', async () => {
    await assert.rejects(
      browserForTests({ env: { CI: 'true' }, systemPath: nowhere, packageDir: undefined }),
      /^Error: CI=true and no Chromium/,
    );
  });

  test('the package is used on Linux x64 with glibc only (it ships no other binary)', async () => {
    if (!packageDir) return;
    assert.equal(await chooseChromium({ env: {}, systemPath: nowhere, packageDir, arch: 'arm64', cacheRoot: root }), undefined);
    assert.equal(await chooseChromium({ env: {}, systemPath: nowhere, packageDir, platform: 'darwin', cacheRoot: root }), undefined);
    assert.equal(await chooseChromium({ env: {}, systemPath: nowhere, packageDir, glibc: false, cacheRoot: root }), undefined);
  });
});

describe('the Chromium shipped in @sparticuz/chromium', {
  skip: packagedHere ? false : 'the package ships a Linux x64 binary only',
}, () => {
  const cacheRoot = join(root, 'cache');
  before(() => mkdirSync(cacheRoot));

  test('is unpacked once into a private directory named by its version, and launches', async () => {
    const choice = (await chooseChromium({ env: {}, systemPath: nowhere, packageDir, cacheRoot }))!;
    assert.equal(choice.source, 'npm package');
    assert.match(choice.executablePath, /herald-chromium-\d+\.\d+\.\d+\/chromium$/);
    const dir = dirname(choice.executablePath);
    // Only the finished directory is left: the staging copy was renamed into place.
    assert.deepEqual(readdirSync(cacheRoot), [dir.slice(cacheRoot.length + 1)]);
    assert.equal(statSync(dir).mode & 0o022, 0);
    assert.ok(existsSync(join(dir, 'lib', 'libnss3.so')));

    const unpackedAt = statSync(choice.executablePath).mtimeMs;
    const again = (await chooseChromium({ env: {}, systemPath: nowhere, packageDir, cacheRoot }))!;
    assert.equal(again.executablePath, choice.executablePath);
    assert.equal(statSync(again.executablePath).mtimeMs, unpackedAt, 'reused, not unpacked again');

    const tests = await browserForTests({ env: {}, systemPath: nowhere, packageDir, cacheRoot });
    assert.equal(tests.skip, false);
    const browser = await tests.launch();
    try {
      const page = await browser.newPage();
      await page.setContent('<title>x</title><p id="p"></p><script>document.getElementById("p").textContent = String(6 * 7)</script>');
      assert.equal(await page.textContent('#p'), '42');
    } finally {
      await browser.close();
    }
  });

  test('a directory others can write to is refused, not run', async () => {
    const { version } = JSON.parse(readFileSync(join(packageDir!, 'package.json'), 'utf8')) as { version: string };
    const planted = join(root, 'planted');
    mkdirSync(join(planted, `herald-chromium-${version}`, 'lib'), { recursive: true });
    writeFileSync(join(planted, `herald-chromium-${version}`, 'chromium'), '#!/bin/sh\n', { mode: 0o755 });
    chmodSync(join(planted, `herald-chromium-${version}`), 0o777);
    await assert.rejects(
      chooseChromium({ env: {}, systemPath: nowhere, packageDir, cacheRoot: planted }),
      /writable by others: refusing to run a browser from it/,
    );
  });
});
