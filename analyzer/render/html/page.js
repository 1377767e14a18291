/*
 * page.js - wires the page: reads the data block, draws the flame graph
 * and the timeline, makes the tables sortable. Sets data-ready="1" on the
 * root element when everything is drawn (tests wait for it).
 */
(function () {
	var U = PerfrecUtil;
	var root = document.documentElement;
	var data = JSON.parse(document.getElementById('perfrec-data').textContent);
	var names = data.names || [];
	var tip = new U.Tip(document.getElementById('tip'));

	function byId(id) {
		return document.getElementById(id);
	}

	/* ---- flame graphs */
	var flames = data.flames || [];
	var fg = new PerfrecFlame.Flame(byId('fg'), tip);
	var which = byId('fg-which'), invert = byId('fg-invert'), search = byId('fg-search');
	var match = byId('fg-match'), fgNote = byId('fg-note');

	function legend() {
		var span = document.createElement('span');
		span.className = 'legend';
		var items = data.diff ?
			[['hsl(0,80%,55%)', 'grew'], ['hsl(220,80%,55%)', 'shrank'],
			 ['hsl(0,80%,97%)', 'unchanged'], ['#ddd', 'pruned']] :
			[['hsl(25,80%,62%)', 'function'], ['hsl(190,45%,66%)', 'kernel function'],
			 ['#b9c8dc', 'task (process name)'], ['#ddd', 'pruned']];
		items.forEach(function (e) {
			var item = document.createElement('span');
			var sw = document.createElement('i');
			sw.style.background = e[0];
			item.appendChild(sw);
			item.appendChild(document.createTextNode(e[1]));
			span.appendChild(item);
		});
		return span;
	}

	function showFlame() {
		var f = flames[Number(which.value) || 0];
		if (!f)
			return;
		var tree = invert.checked ? f.callee : f.caller;
		fg.fraction = tree.fraction;
		fg.show(tree, names, { unit: f.unit, title: f.title, base: data.diff ? f.base : undefined },
			f.weight, f.count);
		var what = f.unit === 'ns' ? U.duration(f.weight) + ' off-CPU' :
			U.grouped(f.count) + ' samples';
		U.clear(fgNote);
		fgNote.appendChild(document.createTextNode(
			f.title + ': ' + what + '. ' + (data.diff ? 'Differential: widths from the new ' +
				'profile; red frames hold a larger share than in the base, blue a ' +
				'smaller one, the deepest ' +
				'color for the largest change (' + (100 * fg.tree.maxChange).toFixed(2) +
				' points); hover for both shares. ' : '') + (invert.checked ?
				'Inverted: the functions that were running are on top, their callers below. ' :
				'Callers on top, the functions they called below; width is the share of ' +
				(f.unit === 'ns' ? 'the time' : 'the period') + '. ') +
			(tree.pruned ? U.grouped(tree.pruned) + ' frames under ' + U.pct(tree.fraction, 1) +
				' each are merged into grey boxes. ' : '') +
			'Click to zoom, Escape to reset. '));
		fgNote.appendChild(legend());
	}

	if (!flames.length) {
		fgNote.textContent = 'No samples in this trace, or none passed the filters: record ' +
			'with a sampling event and call stacks (perfrec record -F 999 -g ...).';
		byId('fg').hidden = true;
		which.disabled = invert.disabled = search.disabled = byId('fg-reset').disabled = true;
	} else {
		flames.forEach(function (f, i) {
			var o = document.createElement('option');
			o.value = String(i);
			o.textContent = f.title + ' \u2014 ' +
				(f.unit === 'ns' ? U.duration(f.weight) : U.grouped(f.count) + ' samples');
			which.appendChild(o);
		});
		which.addEventListener('change', showFlame);
		invert.addEventListener('change', showFlame);
		search.addEventListener('input', function () { fg.search(search.value); });
		byId('fg-reset').addEventListener('click', function () { fg.zoomTo(null); });
		document.addEventListener('keydown', function (ev) {
			if (ev.key === 'Escape')
				fg.zoomTo(null);
		});
		fg.onsearch = function (r) {
			match.textContent = r ? 'Matched: ' + U.pct(r.share, 1) + ' in ' +
				U.grouped(r.frames) + (r.frames === 1 ? ' frame' : ' frames') : '';
		};
		var resizeTimer = 0;
		window.addEventListener('resize', function () {
			clearTimeout(resizeTimer);
			resizeTimer = setTimeout(function () { fg.render(); fg.search(search.value); }, 100);
		});
		showFlame();
	}

	/* ---- timeline: CPU lanes (switch records) and tracks (any samples) */
	var tlNote = byId('tl-note'), tk = data.tracks;
	if (!data.timeline && !tk) {
		tlNote.textContent = 'No context-switch records or samples in this trace: record with ' +
			'--switch-events (perfrec record -a --switch-events ...) to see which task ran ' +
			'on which CPU.';
		byId('tl').hidden = true;
		byId('tl-in').disabled = byId('tl-out').disabled = byId('tl-reset').disabled = true;
	} else {
		/* without switch records: no lanes, the tracks' window */
		var d = data.timeline || { t0: tk.t0, t1: tk.t0 + tk.bin * tk.nbins, bucket: tk.bin,
					   nbuckets: tk.nbins, dropped: 0, lanes: [], tasks: [] };
		var tracks = tk ? new PerfrecTracks.Tracks(tk, names, PerfrecTimeline.taskColor) : null;
		var tl = new PerfrecTimeline.Timeline(byId('tl'), d, names, tip, tracks);
		tlNote.textContent = (data.timeline ? U.grouped(d.lanes.length) +
			(d.lanes.length === 1 ? ' CPU' : ' CPUs') + ' over ' + U.duration(d.t1 - d.t0) +
			'. Runs shorter than ' + U.duration(d.bucket) + ' are summed per ' +
			U.duration(d.bucket) + ' (shade = busy share, color = the task that ran ' +
			'longest); empty space is idle.' :
			'No context-switch records (record with --switch-events for CPU lanes and ' +
			'on-CPU time): the tracks show samples only.') +
			(d.dropped ? ' ' + U.grouped(d.dropped) + ' runs on CPUs past the first 1024 are ' +
				'not drawn.' : '') +
			(tk ? ' Tracks: per ' + U.duration(tk.bin) + ', on-CPU time on top, sample ' +
				'density in the middle' + (tk.offcpu ? ', off-CPU blocks at the bottom' : '') +
				'; click a track to follow its thread.' : '');
		byId('tl-in').addEventListener('click', function () { tl.zoomAt(0.5, 0.5); });
		byId('tl-out').addEventListener('click', function () { tl.zoomAt(0.5, 2); });
		byId('tl-reset').addEventListener('click', function () { tl.reset(); });
		tl.onselect = function (line) {
			byId('tl-sel').textContent = line ? 'Following ' + line : '';
		};
	}

	/* ---- sortable tables */
	function cellValue(td, numeric) {
		var t = td ? td.textContent : '';
		if (!numeric)
			return t;
		var v = parseFloat(t.replace(/[,%]/g, ''));
		return isNaN(v) ? -Infinity : v;
	}

	Array.prototype.forEach.call(document.querySelectorAll('table.t'), function (table) {
		var ths = table.querySelectorAll('thead th');
		Array.prototype.forEach.call(ths, function (th, col) {
			th.addEventListener('click', function () {
				var numeric = th.classList.contains('n');
				/* numbers start heaviest first, text A to Z; a second
				 * click turns the order */
				var cur = th.getAttribute('aria-sort');
				var desc = numeric ? cur !== 'descending' : cur === 'ascending';
				var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
				rows.sort(function (a, b) {
					var x = cellValue(a.cells[col], numeric), y = cellValue(b.cells[col], numeric);
					var c = numeric ? x - y : String(x).localeCompare(String(y));
					return desc ? -c : c;
				});
				Array.prototype.forEach.call(ths, function (h) { h.removeAttribute('aria-sort'); });
				th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
				rows.forEach(function (r) { body.appendChild(r); });
			});
		});
	});

	root.setAttribute('data-ready', '1');
})();
