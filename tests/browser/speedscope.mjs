// SPDX-License-Identifier: MIT
//
// Opens a profile in speedscope's web app (its npm package's build) in
// headless Chromium, and prints what a person sees there, read from the
// page's text:
//
//   profile NAME<TAB>TOTAL        each profile of the selector at the top,
//                                 its total weight (none with one profile)
//   frame PROFILE<TAB>NAME<TAB>TOTAL   each row of a profile's Sandwich table
//
// usage: node speedscope.mjs PROFILE.json SCREENSHOT.png
//
// It serves the app and the file from 127.0.0.1 on a free port (speedscope
// loads #profileURL= over HTTP only), and leaves SCREENSHOT.png of the last
// view, failed or not. CHROMIUM names the browser (default
// /usr/bin/chromium, Debian's). Exit status 1 with a message on failure.

import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const [profilePath, screenshot] = process.argv.slice(2);
if (!profilePath || !screenshot) {
	console.error('usage: node speedscope.mjs PROFILE.json SCREENSHOT.png');
	process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, 'node_modules', 'speedscope', 'dist', 'release');

// The app's files, and the profile as /profile.json.
const server = createServer(async (req, res) => {
	const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
	const file = path === '/profile.json' ? profilePath : join(app, path === '/' ? 'index.html' : path);
	try {
		const body = await readFile(file);
		res.writeHead(200, file.endsWith('.html') ? { 'Content-Type': 'text/html' } : {});
		res.end(body);
	} catch {
		res.writeHead(404);
		res.end();
	}
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	args: ['--no-sandbox'],
});
// Tall: the Sandwich table draws only the rows in view.
const page = await browser.newPage({ viewport: { width: 1400, height: 4000 } });
page.setDefaultTimeout(30000);
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));
const out = [];

try {
	const url = `http://127.0.0.1:${server.address().port}/index.html#profileURL=/profile.json&view=sandwich`;
	await page.goto(url);
	// The Sandwich view: a header table, then the rows' table after it.
	const sandwich = page.locator('table:has(th:has-text("Symbol Name")) + div table tr');
	await sandwich.first().waitFor().catch(() => {
		throw new Error(`speedscope shows no Sandwich table${errors.length ? ': ' + errors.join('; ') : ''}`);
	});
	// The profile selector: a table of every profile, hidden until the
	// title is clicked; one profile has none.
	const choices = page.locator('tr[title]');
	const listed = await choices.evaluateAll((rows) =>
		rows.map((r) => [r.getAttribute('title'), r.cells[r.cells.length - 1].textContent]));
	const names = listed.map(([name]) => name);
	if (names.length === 0)
		names.push(await page.evaluate(() => {
			// The title between the view buttons and the others.
			const views = [...document.querySelectorAll('div')].find((d) =>
				d.children.length === 3 && d.textContent.endsWith('Sandwich'));
			return [...views.parentElement.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)
				.map((n) => n.textContent).join('');
		}));
	for (const [i, name] of names.entries())
		out.push(`profile ${name}\t${listed.length ? listed[i][1] : ''}`);
	for (let i = 0; i < names.length; i++) {
		if (i > 0) {
			await page.getByText(`(${i}/${names.length})`).click();
			await choices.nth(i).click();
			await page.getByText(`(${i + 1}/${names.length})`).waitFor();
			await sandwich.first().waitFor();
		}
		// Total, self and name; a profile with no weight (a thread of one
		// sample) has one cell instead: "No symbols found."
		const rows = await sandwich.evaluateAll((trs) => trs.filter((tr) => tr.cells.length === 3)
			.map((tr) => [...tr.cells].map((td) => td.innerText.trim())));
		for (const [total, , symbol] of rows)
			out.push(`frame ${names[i]}\t${symbol}\t${total.split(' ')[0]}`);
	}
} catch (e) {
	console.error(`speedscope.mjs: ${e.message.split('\n')[0]}`);
	process.exitCode = 1;
} finally {
	await page.screenshot({ path: screenshot }).catch(() => {});
	await browser.close();
	server.close();
}
console.log(out.join('\n'));
