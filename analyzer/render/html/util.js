/*
 * util.js - helpers shared by the flame graph, the timeline and the page:
 * number formats, colors by name, and the tooltip.
 *
 * Every string that comes from the trace (names of functions, tasks,
 * objects) is untrusted: scripts of this page put it in the document with
 * textContent or createTextNode only, never as markup.
 */
'use strict';

var PerfrecUtil = (function () {
	function pct(part, total) {
		if (!total)
			return '0%';
		var p = 100 * part / total;
		return (p >= 10 ? p.toFixed(1) : p >= 1 ? p.toFixed(2) : p.toFixed(3)) + '%';
	}

	function grouped(n) {
		return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}

	/* A duration in ns, with a unit that keeps 3-4 digits. */
	function duration(ns) {
		if (ns >= 1e9)
			return (ns / 1e9).toFixed(3) + ' s';
		if (ns >= 1e6)
			return (ns / 1e6).toFixed(3) + ' ms';
		if (ns >= 1e3)
			return (ns / 1e3).toFixed(1) + ' us';
		return Math.round(ns) + ' ns';
	}

	/* Seconds from the trace start, as many decimals as the scale needs. */
	function seconds(ns, step) {
		var d = step >= 1e9 ? 0 : step >= 1e8 ? 1 : step >= 1e7 ? 2 : step >= 1e6 ? 3 :
			step >= 1e5 ? 4 : step >= 1e4 ? 5 : step >= 1e3 ? 6 : 9;
		return (ns / 1e9).toFixed(d) + ' s';
	}

	/* A stable number in [0, 1) for a string (FNV-1a). */
	function hash(s) {
		var h = 2166136261;
		for (var i = 0; i < s.length; i++) {
			h ^= s.charCodeAt(i);
			h = Math.imul(h, 16777619);
		}
		return ((h >>> 0) % 1000) / 1000;
	}

	/* The tooltip: a title line and text lines, placed near the pointer. */
	function Tip(el) {
		this.el = el;
	}
	Tip.prototype.show = function (ev, title, lines) {
		var el = this.el;
		el.textContent = '';
		var b = document.createElement('b');
		b.textContent = title;
		el.appendChild(b);
		for (var i = 0; i < lines.length; i++)
			el.appendChild(document.createTextNode('\n' + lines[i]));
		el.hidden = false;
		var w = el.offsetWidth, h = el.offsetHeight;
		var x = ev.clientX + 14, y = ev.clientY + 16;
		if (x + w > window.innerWidth - 4)
			x = Math.max(4, ev.clientX - w - 10);
		if (y + h > window.innerHeight - 4)
			y = Math.max(4, ev.clientY - h - 12);
		el.style.left = x + 'px';
		el.style.top = y + 'px';
	};
	Tip.prototype.hide = function () {
		this.el.hidden = true;
	};

	function clear(el) {
		while (el.firstChild)
			el.removeChild(el.firstChild);
	}

	/* A legend: an element of the given tag and class holding a swatch
	 * and a label per [background, label] item. */
	function legend(tag, cls, items) {
		var box = document.createElement(tag);
		box.className = cls;
		items.forEach(function (e) {
			var item = document.createElement('span');
			var sw = document.createElement('i');
			sw.style.background = e[0];
			item.appendChild(sw);
			item.appendChild(document.createTextNode(e[1]));
			box.appendChild(item);
		});
		return box;
	}

	return { pct: pct, grouped: grouped, duration: duration, seconds: seconds,
		 hash: hash, Tip: Tip, clear: clear, legend: legend };
})();
