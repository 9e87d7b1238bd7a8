// SPDX-License-Identifier: GPL-2.0-only
// latprof's flame graph viewer, embedded in every SVG that flamegraph/svg.c
// writes (unless --no-script). Written for latprof; it reads the DOM described
// in docs/formats.md ("Flame graph SVG"): frames are <g class="f"> in tree
// order (pre-order) inside <g id="frames">, each with data-name, data-w and a
// <rect> whose x/width/y are the unzoomed layout.
(function () {
	"use strict";
	var doc = document;
	var group = doc.getElementById("frames");
	if (!group)
		return;
	var details = doc.getElementById("details");
	var matched = doc.getElementById("matched");
	var unzoomBtn = doc.getElementById("unzoom");
	var searchBtn = doc.getElementById("search");
	var num = function (name) { return parseFloat(group.getAttribute(name)) || 0; };
	var total = num("data-total"), total2 = num("data-total2");
	var unit = group.getAttribute("data-unit") || "samples";
	var mode = group.getAttribute("data-mode") || "plain";
	var normalize = group.getAttribute("data-normalize") === "1";
	var xpad = num("data-xpad"), area = num("data-area"), frameH = num("data-frame-h") || 16;
	var charW = 12 * 0.59;
	var frames = [];
	var zoomed = null, lastRegex = "";

	// --- model: one record per frame, with its place in the tree ---

	function load() {
		var gs = group.getElementsByTagName("g"), stack = [], i;
		for (i = 0; i < gs.length; i++) {
			var g = gs[i], rect = g.getElementsByTagName("rect")[0];
			var f = {
				g: g, rect: rect, text: g.getElementsByTagName("text")[0],
				name: g.getAttribute("data-name") || "",
				w: parseFloat(g.getAttribute("data-w")) || 0,
				w2: parseFloat(g.getAttribute("data-w2")) || 0,
				x: parseFloat(rect.getAttribute("x")), width: parseFloat(rect.getAttribute("width")),
				y: parseFloat(rect.getAttribute("y")), index: i, parent: null, end: i + 1
			};
			f.depth = frames.length ? Math.round(Math.abs(f.y - frames[0].y) / frameH) : 0;
			// pre-order: the parent is the nearest open frame one level down
			while (stack.length && stack[stack.length - 1].depth >= f.depth)
				stack.pop().end = i;
			f.parent = stack.length ? stack[stack.length - 1] : null;
			stack.push(f);
			frames.push(f);
			g.__flame = f;
		}
		while (stack.length)
			stack.pop().end = frames.length;
	}

	// --- numbers for people ---

	function grouped(v) {
		return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	}

	function value(v) {
		if (unit === "nanoseconds") {
			var steps = [[1, "ns"], [1e3, "\u00b5s"], [1e6, "ms"], [1e9, "s"]], i = 0;
			while (i + 1 < steps.length && v >= steps[i + 1][0] * 0.9995)
				i++;
			var x = v / steps[i][0];
			return x.toFixed(i && x < 10 ? 2 : i && x < 100 ? 1 : 0) + " " + steps[i][1];
		}
		return grouped(v) + (unit === "count" ? "" : " " + unit);
	}

	function pct(v, t) {
		return (t ? 100 * v / t : 0).toFixed(2) + "%";
	}

	function describe(f) {
		if (mode === "diff") {
			var s = f.name + ": after " + value(f.w) + " (" + pct(f.w, total) + "), before " +
				value(f.w2) + " (" + pct(f.w2, total2) + "), ";
			if (normalize) {
				var d = (total ? 100 * f.w / total : 0) - (total2 ? 100 * f.w2 / total2 : 0);
				return s + (d >= 0 ? "+" : "") + d.toFixed(2) + " points of the total";
			}
			return s + (f.w >= f.w2 ? "+" : "-") + value(Math.abs(f.w - f.w2));
		}
		var t = f.name + " (" + value(f.w) + ", " + pct(f.w, total);
		if (mode === "hotcold")
			t += ", off-CPU " + (f.w ? 100 * f.w2 / f.w : 0).toFixed(1) + "%";
		return t + ")";
	}

	// --- drawing ---

	// As much of the name as fits, cut with ".." (svg.c does the same).
	function fitLabel(f, w) {
		var fit = Math.floor((w - 6) / charW), chars = Array.from(f.name);
		if (fit < 3)
			return "";
		return chars.length <= fit ? f.name : chars.slice(0, fit - 2).join("") + "..";
	}

	function place(f, x, w, dim) {
		f.rect.setAttribute("x", x.toFixed(2));
		f.rect.setAttribute("width", w.toFixed(2));
		f.text.setAttribute("x", (x + 3).toFixed(2));
		f.text.textContent = fitLabel(f, w);
		f.g.classList.remove("gone");
		f.g.classList.toggle("dim", !!dim);
	}

	function frameOf(node) {
		while (node && node !== group) {
			if (node.__flame)
				return node.__flame;
			node = node.parentNode;
		}
		return null;
	}

	// The clicked frame spans the whole width, its subtree scaled with it;
	// its ancestors stay (dimmed, full width), everything else is hidden.
	function zoom(z) {
		var scale = area / z.width, i, a;
		for (i = 0; i < frames.length; i++)
			frames[i].g.classList.add("gone");
		for (i = z.index; i < z.end; i++) {
			var f = frames[i];
			place(f, xpad + (f.x - z.x) * scale, f.width * scale, false);
		}
		for (a = z.parent; a; a = a.parent)
			place(a, xpad, area, true);
		zoomed = z;
		unzoomBtn.classList.remove("off");
	}

	function unzoom() {
		for (var i = 0; i < frames.length; i++)
			place(frames[i], frames[i].x, frames[i].width, false);
		zoomed = null;
		unzoomBtn.classList.add("off");
	}

	// --- search ---

	function clearSearch() {
		for (var i = 0; i < frames.length; i++)
			frames[i].rect.classList.remove("m");
		matched.textContent = " ";
		lastRegex = "";
	}

	// Highlight the frames whose name matches; the matched share counts each
	// matching subtree once (a match inside a match adds nothing).
	function search(source) {
		var re, sum = 0, coveredTo = 0, i;
		clearSearch();
		if (!source)
			return 0;
		try {
			re = new RegExp(source);
		} catch (e) {
			details.textContent = "Invalid search: " + e.message;
			return -1;
		}
		for (i = 0; i < frames.length; i++) {
			var f = frames[i];
			if (!re.test(f.name))
				continue;
			f.rect.classList.add("m");
			if (i >= coveredTo) {
				sum += f.w;
				coveredTo = f.end;
			}
		}
		lastRegex = source;
		var share = total ? 100 * sum / total : 0;
		matched.textContent = "Matched: " + share.toFixed(1) + "%";
		return share;
	}

	function askSearch() {
		var s = window.prompt("Search frames (regular expression); empty clears", lastRegex);
		if (s !== null)
			search(s);
	}

	// --- events ---

	group.addEventListener("mouseover", function (e) {
		var f = frameOf(e.target);
		if (f)
			details.textContent = describe(f);
	});
	group.addEventListener("mouseout", function (e) {
		if (frameOf(e.target))
			details.textContent = " ";
	});
	group.addEventListener("click", function (e) {
		var f = frameOf(e.target);
		if (f)
			zoom(f);
	});
	unzoomBtn.addEventListener("click", function () {
		if (zoomed)
			unzoom();
	});
	searchBtn.addEventListener("click", askSearch);
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F")) {
			e.preventDefault();
			askSearch();
		} else if (e.key === "Escape") {
			clearSearch();
		}
	});

	load();
	// the test hooks, and what a user may call from the console
	window.flameSearch = search;
	window.flameReset = function () {
		unzoom();
		clearSearch();
	};
	window.flameZoom = function (index) {
		if (frames[index])
			zoom(frames[index]);
	};
	var params = new URLSearchParams(window.location.search);
	if (params.get("s"))
		search(params.get("s"));
})();
