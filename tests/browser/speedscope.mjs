// SPDX-License-Identifier: GPL-2.0-only
// A latprof speedscope export opens in the real speedscope (the npm
// package's release build, served with the profile on loopback):
//
//	node speedscope.mjs PROFILE.speedscope.json NPROFILES FRAME... [-- BROKEN.json]
//
// Checks: speedscope imports the file (its title becomes the file's "name",
// no "Something went wrong", no "Failed to load" on the console); it offers
// NPROFILES profiles (the "(K/N)" selector) and opens the one the file's
// activeProfileIndex names (latprof's heaviest, which may be any of them);
// going through them from the first with "n", the sandwich view's table,
// filtered by speedscope's search, lists every FRAME. BROKEN, a file speedscope
// must refuse, proves the error check can fail. Screenshots of the flame
// chart and the sandwich view are saved as artefacts.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, screenshot, serve, withBrowser } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const RELEASE = join(here, 'node_modules/speedscope/dist/release');
const IMPORT_TIMEOUT_MS = 20000;

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const broken = sep >= 0 ? args[sep + 1] : null;
const [profile, nprofiles, ...frames] = sep >= 0 ? args.slice(0, sep) : args;
if (!profile || !(Number(nprofiles) > 0) || !frames.length) {
	console.error('usage: node speedscope.mjs PROFILE NPROFILES FRAME... [-- BROKEN]');
	process.exit(2);
}
check(existsSync(join(RELEASE, 'index.html')), `speedscope's release build at ${RELEASE}`);

// Open @file in speedscope; resolves to { page, failed } once the import
// ended either way (title set, or the error message shown).
async function open(browser, srv, file) {
	const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
	const url = `${srv.url}p/${encodeURIComponent(basename(file))}`;
	let failed = '';

	page.on('console', (m) => {
		if (/failed to load|error/i.test(m.text()) && !/GL Driver/.test(m.text()))
			failed ||= m.text().split('\n')[0];
	});
	page.on('pageerror', (e) => { failed ||= e.message; });
	await page.goto(`${srv.url}index.html#profileURL=${encodeURIComponent(url)}`);
	await page.waitForFunction(
		() => document.title !== 'speedscope' || /went wrong/.test(document.body.innerText),
		null, { timeout: IMPORT_TIMEOUT_MS });
	if (/went wrong/.test(await page.innerText('body')))
		failed ||= 'Something went wrong';
	return { page, failed };
}

// The @frames the sandwich table of the profile on show lists. The table
// only renders the rows in view, so each name is looked up with speedscope's
// search (Ctrl+F), which filters the table.
async function sandwichFind(page, frames) {
	const found = [];

	await page.getByText('Symbol Name').waitFor({ timeout: IMPORT_TIMEOUT_MS });
	for (const f of frames) {
		await page.keyboard.press('Control+f');
		await page.locator('input:visible').first().fill(f);
		const hit = await page.waitForFunction(
			(n) => document.body.innerText.split('\n').some((l) => l.trim() === n),
			f, { timeout: 3000 }).then(() => true, () => false);
		if (hit)
			found.push(f);
	}
	await page.keyboard.press('Escape');
	return found;
}

// The profile selector "(K/N)" of the toolbar: { k, n }, or null when
// speedscope shows none (a single profile).
async function selector(page) {
	const m = /\((\d+)\/(\d+)\)/.exec(await page.innerText('body'));

	return m ? { k: Number(m[1]), n: Number(m[2]) } : null;
}

// Press @key ("n" next, "p" previous profile) and wait for the page to change.
async function step(page, key) {
	const before = await page.innerText('body');

	await page.keyboard.press(key);
	await page.waitForFunction((b) => document.body.innerText !== b, before,
				   { timeout: IMPORT_TIMEOUT_MS });
}

async function run(browser, srv) {
	const { page, failed } = await open(browser, srv, profile);
	const n = Number(nprofiles);
	const active = JSON.parse(readFileSync(profile, 'utf8')).activeProfileIndex || 0;
	const seen = new Set();

	check(!failed, `speedscope imports ${basename(profile)} without error${failed ? ` (got: ${failed})` : ''}`);
	const sel = await selector(page);
	check(n === 1 ? !sel : sel && sel.n === n,
	      `speedscope offers ${n} profile(s) (got: ${sel ? sel.n : 1})`);
	// The heaviest profile opens first, and which one that is depends on
	// timing (sys_pipe's reader and writer differ by a few ms in 1 s).
	check(n === 1 || sel.k === active + 1,
	      `speedscope opens profile ${active + 1}, the file's activeProfileIndex (got: ${sel && sel.k})`);
	await screenshot(page, 'speedscope-flamechart.png');
	await page.getByText('Sandwich').click();
	for (let k = sel ? sel.k : 1; k > 1; k--)
		await step(page, 'p');
	for (let i = 0; i < n; i++) {
		if (i === 0)
			await screenshot(page, 'speedscope-sandwich.png');
		for (const f of await sandwichFind(page, frames.filter((x) => !seen.has(x))))
			seen.add(f);
		if (i + 1 < n)
			await step(page, 'n');
	}
	for (const f of frames)
		check(seen.has(f), `the sandwich view lists ${f}`);
	if (broken) {
		const bad = await open(browser, srv, broken);
		check(bad.failed, `speedscope refuses the broken file ${basename(broken)} (${bad.failed})`);
	}
}

const dirs = { '': RELEASE, p: dirname(resolve(profile)) };
if (broken && dirname(resolve(broken)) !== dirs.p)
	check(false, 'the broken file must sit next to the profile');
const srv = await serve(dirs);
await withBrowser((browser) => run(browser, srv));
await srv.close();
