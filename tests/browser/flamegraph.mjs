// SPDX-License-Identifier: GPL-2.0-only
// The flame graph viewer in a real browser: hover, zoom, reset, search (the
// button, Ctrl-F, window.flameSearch and ?s= on load), against the DOM
// contract in docs/formats.md.
//
// usage: node flamegraph.mjs FILE.svg FRAME REGEX EXPECTED_PCT
//   FRAME         a frame name to hover and zoom into (e.g. hot_a)
//   REGEX         a search whose matched share is EXPECTED_PCT (percent of
//                 the total, from ground truth outside the SVG), +-0.15
import { basename, dirname, resolve } from 'node:path';
import { check, screenshot, serve, withBrowser } from './lib.mjs';

const [svgPath, frameName, regex, expectedArg] = process.argv.slice(2);
if (!svgPath || !frameName || !regex || expectedArg === undefined) {
	console.error('usage: node flamegraph.mjs FILE.svg FRAME REGEX EXPECTED_PCT');
	process.exit(2);
}
const expected = Number(expectedArg);
const server = await serve(dirname(resolve(svgPath)));
const url = server.url + encodeURIComponent(basename(svgPath));

// The state of the page that the checks look at, read from the DOM only.
function state(page, name) {
	return page.evaluate((name) => {
		const frames = document.getElementById('frames');
		const gs = [...frames.querySelectorAll('g.f')];
		const g = gs.find((x) => x.getAttribute('data-name') === name);
		const shown = gs.filter((x) => getComputedStyle(x).display !== 'none');
		const marked = gs.filter((x) => x.querySelector('rect').classList.contains('m'));
		return {
			area: Number(frames.getAttribute('data-area')),
			total: Number(frames.getAttribute('data-total')),
			width: g ? Number(g.querySelector('rect').getAttribute('width')) : -1,
			frames: gs.length,
			shown: shown.length,
			marked: marked.map((x) => ({ name: x.getAttribute('data-name'),
						     w: Number(x.getAttribute('data-w')),
						     fill: getComputedStyle(x.querySelector('rect')).fill })),
			matched: document.getElementById('matched').textContent.trim(),
			details: document.getElementById('details').textContent.trim(),
		};
	}, name);
}

function matchedPct(s) {
	const m = /^Matched: ([0-9.]+)%$/.exec(s.matched);
	return m ? Number(m[1]) : NaN;
}

function checkSearch(s, how) {
	const re = new RegExp(regex);
	const pct = matchedPct(s);

	check(s.marked.length > 0 && s.marked.every((m) => re.test(m.name)),
	      `${how}: ${s.marked.length} highlighted frames, all matching /${regex}/`);
	check(s.marked.every((m) => m.fill === 'rgb(230, 0, 230)'),
	      `${how}: highlighted frames are magenta`);
	check(Math.abs(pct - expected) <= 0.15,
	      `${how}: "${s.matched}" is the expected ${expected.toFixed(2)}% +-0.15`);
}

await withBrowser(async (browser) => {
	const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
	const errors = [];

	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(url);
	const start = await state(page, frameName);
	check(start.frames > 1 && start.width > 0, `${start.frames} frames, ${frameName} is one`);
	const sel = `#frames g.f[data-name="${frameName}"] rect`;

	await page.hover(sel);
	const hovered = await state(page, frameName);
	check(hovered.details.startsWith(frameName + ' (') && hovered.details.includes('%'),
	      `hover: details "${hovered.details}"`);

	await page.click(sel);
	const zoomed = await state(page, frameName);
	check(zoomed.width >= 0.99 * zoomed.area,
	      `zoom: ${frameName} is ${zoomed.width} px of ${zoomed.area} px`);
	check(zoomed.shown < start.frames, `zoom: ${zoomed.shown} of ${start.frames} frames shown`);
	await screenshot(page, 'flamegraph-zoomed.png');

	await page.click('#unzoom');
	const reset = await state(page, frameName);
	check(Math.abs(reset.width - start.width) < 0.01 && reset.shown === start.frames,
	      `reset: ${frameName} back to ${reset.width} px, all frames shown`);

	page.once('dialog', (d) => d.accept(regex));
	await page.click('#search');
	checkSearch(await state(page, frameName), 'Search button');
	await screenshot(page, 'flamegraph-search.png');

	await page.evaluate(() => window.flameReset());
	const cleared = await state(page, frameName);
	check(cleared.marked.length === 0 && cleared.matched === '', 'flameReset clears the search');

	page.once('dialog', (d) => d.accept(regex));
	await page.keyboard.press('Control+f');
	checkSearch(await state(page, frameName), 'Ctrl-F');

	await page.evaluate(() => window.flameReset());
	const share = await page.evaluate((r) => window.flameSearch(r), regex);
	check(Math.abs(share - expected) <= 0.15, `flameSearch returns ${share.toFixed(2)}%`);

	await page.goto(`${url}?s=${encodeURIComponent(regex)}`);
	checkSearch(await state(page, frameName), '?s= on load');
	await screenshot(page, 'flamegraph-url-search.png');
	check(errors.length === 0, `no script errors (${errors.join('; ')})`);
});
await server.close();
