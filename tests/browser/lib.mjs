// SPDX-License-Identifier: GPL-2.0-only
// Shared helpers of the browser tests: headless Debian chromium driven by
// playwright-core, a static HTTP server on loopback, screenshots as test
// artefacts, and checks that fail the test with exit status 1.
//
// Environment: CHROMIUM (the browser binary, default: Debian's), ARTIFACTS
// (where screenshots go, default build/artifacts under the repo root).
import { createReadStream, mkdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const top = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// Debian's /usr/bin/chromium is a shell wrapper; the binary behind it starts
// the same browser without the wrapper's environment probing.
const CHROMIUM_CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'];

function chromiumPath() {
	if (process.env.CHROMIUM)
		return process.env.CHROMIUM;
	for (const p of CHROMIUM_CANDIDATES) {
		try {
			if (statSync(p).isFile())
				return p;
		} catch {
			// try the next one
		}
	}
	throw new Error('chromium not found (apt-get install chromium, or set CHROMIUM)');
}

// A headless browser. Root cannot use chromium's sandbox.
export async function launch() {
	return chromium.launch({
		executablePath: chromiumPath(),
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
}

const TYPES = {
	'.html': 'text/html; charset=utf-8',
	'.js': 'text/javascript',
	'.css': 'text/css',
	'.json': 'application/json',
	'.svg': 'image/svg+xml',
	'.png': 'image/png',
	'.wasm': 'application/wasm',
	'.txt': 'text/plain; charset=utf-8',
};

// Serve the files under @dirs ({ prefix: directory }, or one directory for
// "/") on 127.0.0.1 at a free port. Returns { url, close }; url ends in "/".
export async function serve(dirs) {
	const roots = typeof dirs === 'string' ? { '': dirs } : dirs;
	const server = createServer((req, res) => {
		const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
		const file = lookup(roots, path);

		if (!file) {
			res.writeHead(404).end('not found');
			return;
		}
		res.writeHead(200, {
			'Content-Type': TYPES[extname(file)] || 'application/octet-stream',
			'Access-Control-Allow-Origin': '*',
		});
		createReadStream(file).pipe(res);
	});
	await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
	return {
		url: `http://127.0.0.1:${server.address().port}/`,
		close: () => new Promise((ok) => server.close(ok)),
	};
}

// The file @path names under one of @roots, never outside them.
function lookup(roots, path) {
	for (const [prefix, dir] of Object.entries(roots)) {
		const want = `/${prefix}${prefix ? '/' : ''}`;

		if (!path.startsWith(want))
			continue;
		let rel = path.slice(want.length) || 'index.html';
		const file = normalize(join(resolve(dir), rel));

		if (!file.startsWith(resolve(dir) + sep))
			continue;
		try {
			if (statSync(file).isFile())
				return file;
		} catch {
			// not under this root
		}
	}
	return null;
}

// A path for artefact @name (a screenshot), its directory created.
export function artifact(name) {
	const dir = process.env.ARTIFACTS || join(top, 'build/artifacts');

	mkdirSync(dir, { recursive: true });
	return join(dir, name);
}

// Fail the test unless @cond holds; @msg says what was expected.
export function check(cond, msg) {
	if (!cond) {
		console.error(`FAIL: ${msg}`);
		process.exit(1);
	}
	console.log(`ok: ${msg}`);
}

// Run async @fn(browser) with a fresh browser, closing it however fn ends;
// an exception fails the test with its message.
export async function withBrowser(fn) {
	const browser = await launch();

	try {
		await fn(browser);
	} catch (e) {
		console.error(`FAIL: ${e.stack || e}`);
		process.exitCode = 1;
	} finally {
		await browser.close();
	}
}

// Save a screenshot of @page's viewport as artefact @name and return its
// path. (fullPage screenshots hang on a bare SVG document in chromium.)
export async function screenshot(page, name) {
	const path = artifact(name);

	await page.screenshot({ path });
	console.log(`screenshot: ${path}`);
	return path;
}
