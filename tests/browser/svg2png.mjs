// SPDX-License-Identifier: GPL-2.0-only
// Render an SVG (a latprof flame graph) to PNG with headless chromium, for
// the pictures in README.md and docs/: node svg2png.mjs IN.svg OUT.png [WIDTH]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withBrowser } from './lib.mjs';

const [svg, png, width = '1200'] = process.argv.slice(2);
if (!svg || !png) {
	console.error('usage: node svg2png.mjs IN.svg OUT.png [WIDTH]');
	process.exit(2);
}
await withBrowser(async (browser) => {
	const page = await browser.newPage({ viewport: { width: Number(width), height: 200 } });

	await page.goto(pathToFileURL(resolve(svg)).href);
	const box = await page.evaluate(() => {
		const r = document.documentElement.getBBox ? document.documentElement : null;
		return r ? { w: r.width.baseVal.value, h: r.height.baseVal.value } : null;
	});
	if (box)
		await page.setViewportSize({ width: Math.ceil(box.w), height: Math.ceil(box.h) });
	// fullPage screenshots hang on a bare SVG document: size the viewport instead
	await page.screenshot({ path: png });
});
