/*
 * page.js - wires the page: reads the data block, draws the flame graph
 * and the timeline, makes the tables sortable. Sets data-ready="1" on the
 * root element when everything is drawn (tests wait for it).
 */
(function () {
	var U = PerfrecUtil;
	var root = document.documentElement;
	var all = JSON.parse(document.getElementById('perfrec-data').textContent);
	/* A page of several hosts holds each one's data and server-rendered
	 * parts: the host the address names (#host=NAME&...) is kept, the
	 * others' parts leave the document (so ids stay unique); choosing
	 * another host changes the address and loads the page again. */
	var hosts = all.hosts || null, hostIndex = 0;
	if (hosts) {
		var hm = /(?:^#|&)host=([^&]*)/.exec(location.hash);
		var want = hm ? decodeURIComponent(hm[1]) : null;
		hosts.forEach(function (h, i) {
			if (h === want)
				hostIndex = i;
		});
		Array.prototype.forEach.call(document.querySelectorAll('.host-part'), function (el) {
			if (Number(el.getAttribute('data-host-index')) === hostIndex)
				el.hidden = false;
			else
				el.parentNode.removeChild(el);
		});
		var pick = document.getElementById('host-which');
		hosts.forEach(function (h, i) {
			var o = document.createElement('option');
			o.value = String(i);
			o.textContent = String(h);
			o.selected = i === hostIndex;
			pick.appendChild(o);
		});
		pick.addEventListener('change', function () {
			location.hash = 'host=' + encodeURIComponent(hosts[Number(pick.value)]);
		});
		window.addEventListener('hashchange', function () {
			var m = /(?:^#|&)host=([^&]*)/.exec(location.hash);
			if (m && decodeURIComponent(m[1]) !== hosts[hostIndex])
				location.reload();
		});
		root.setAttribute('data-host', String(hosts[hostIndex]));
	}
	var data = hosts ? all.parts[hostIndex] : all;
	var names = data.names || [];
	var tip = new U.Tip(document.getElementById('tip'));

	function byId(id) {
		return document.getElementById(id);
	}

	/* ---- flame graphs */
	var flames = data.flames || [];
	var fg = new PerfrecFlame.Flame(byId('fg'), tip);
	var ct = new PerfrecCallTree.CallTree(byId('ct'), byId('fn'));
	['ct', 'fn'].forEach(function (which) {
		byId('tab-' + which).addEventListener('click', function () {
			['ct', 'fn'].forEach(function (o) {
				byId(o).hidden = o !== which;
				byId('tab-' + o).classList.toggle('on', o === which);
			});
		});
	});
	ct.onpick = function (name) {   /* a function: searched in the flame graph */
		search.value = '^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
		fg.search(search.value);
	};
	var which = byId('fg-which'), invert = byId('fg-invert'), search = byId('fg-search');
	var match = byId('fg-match'), fgNote = byId('fg-note');

	function legend() {
		return U.legend('span', 'legend', data.diff ?
			[['hsl(0,80%,55%)', 'grew'], ['hsl(220,80%,55%)', 'shrank'],
			 ['hsl(0,80%,97%)', 'unchanged'], ['#ddd', 'pruned']] :
			[['hsl(25,80%,62%)', 'function'], ['hsl(190,45%,66%)', 'kernel function'],
			 ['#b9c8dc', 'task (process name)'], ['#ddd', 'pruned']]);
	}

	/* ---- the selection: a time range (ns from the trace start, a < 0:
	 * none) and a thread or a process (-1: none) */
	var selection = { a: -1, b: -1, tid: -1, pid: -1 };
	var tk = data.tracks;

	function selActive() {
		return selection.a >= 0 || selection.tid >= 0 || selection.pid >= 0;
	}

	/* f's caller tree with only the selected stacks' weights: the page
	 * has them per (time bin, thread, process, node) in f.sel.e, each
	 * bin F tracks' bins wide; a bin counts when it starts in the range.
	 * Self weights are summed per node, then totals up the tree. */
	function selectedTree(f) {
		var tree = f.caller, n = tree.n.length, e = f.sel.e, span = f.sel.f * tk.bin;
		var s = [], c = [], W = 0, C = 0, i;
		for (i = 0; i < n; i++) {
			s.push(0);
			c.push(0);
		}
		for (i = 0; i + 5 < e.length; i += 6) {
			var start = tk.t0 + e[i] * span;
			if (selection.a >= 0 && (start < selection.a || start >= selection.b))
				continue;
			if ((selection.tid >= 0 && e[i + 1] !== selection.tid) ||
			    (selection.pid >= 0 && e[i + 2] !== selection.pid))
				continue;
			W += e[i + 4];
			C += e[i + 5];
			if (e[i + 3] >= 0 && e[i + 3] < n) {
				s[e[i + 3]] += e[i + 4];
				c[e[i + 3]] += e[i + 5];
			}
		}
		var w = s.slice(), cc = c.slice(), stack = [], parent = [];
		for (i = 0; i < n; i++) {   /* pre-order: the parent is the last node a level up */
			parent.push(tree.d[i] > 0 ? stack[tree.d[i] - 1] : -1);
			stack[tree.d[i]] = i;
		}
		for (i = n - 1; i >= 0; i--)
			if (parent[i] >= 0) {
				w[parent[i]] += w[i];
				cc[parent[i]] += cc[i];
			}
		return { n: tree.n, k: tree.k, o: tree.o, d: tree.d, w: w, s: s, c: cc, p: tree.p,
			 fraction: tree.fraction, pruned: tree.pruned, weight: W, count: C };
	}

	/* The range snapped to f's bins: what selectedTree() counts. */
	function snapped(f) {
		var span = f.sel.f * tk.bin;
		function up(t) {
			return tk.t0 + Math.ceil((t - tk.t0) / span) * span;
		}
		return [up(selection.a), up(selection.b)];
	}

	function showFlame() {
		var f = flames[Number(which.value) || 0];
		if (!f)
			return;
		/* a differential tree compares whole profiles: the base side
		 * has no per-bin data, so the selection leaves it whole */
		var filtered = selActive() && f.sel && tk && !data.diff;
		invert.disabled = !!filtered;   /* the inverted tree is the whole trace's */
		if (filtered)
			invert.checked = false;
		var tree = invert.checked ? f.callee : f.caller, weight = f.weight, count = f.count;
		if (filtered) {
			tree = selectedTree(f);
			weight = tree.weight;
			count = tree.count;
		}
		fg.fraction = tree.fraction;
		fg.show(tree, names, { unit: f.unit, title: f.title, base: data.diff ? f.base : undefined },
			weight, count);
		ct.show(tree, names, f.unit, weight, invert.checked);
		var what = f.unit === 'ns' ? U.duration(weight) + ' off-CPU' :
			U.grouped(count) + ' samples';
		if (filtered)
			what += ' in the selection (of ' + (f.unit === 'ns' ? U.duration(f.weight) :
				U.grouped(f.count)) + ')';
		else if (selActive() && data.diff)
			what += ' (whole profiles: the selection does not apply to a differential graph)';
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
		byId('ct').parentNode.hidden = true;
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
	var tlNote = byId('tl-note');
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

	/* ---- the tables: top functions (samples and off-CPU) from the
	 * selected trees, tasks from data.sched; the whole trace's rows
	 * without a selection, and in a differential page (its trees hold
	 * two profiles) */
	var tables = {
		report: new PerfrecTables.Table(document.querySelector('[data-doc="report"]'), 'rows'),
		offcpu: new PerfrecTables.Table(document.querySelector('[data-doc="offcpu"]'), 'rows'),
		sched: new PerfrecTables.Table(document.querySelector('[data-doc="sched"]'), 'tasks'),
		counters: new PerfrecTables.Table(document.querySelector('[data-doc="counters"]'), 'counters')
	};
	var top = data.top || 100;
	/* the whole trace's rows of addresses, one per object as the flame
	 * graph groups them (children from its whole trees) */
	['report', 'offcpu'].forEach(function (which) {
		var t = tables[which], kind = which === 'report' ? 'samples' : 'offcpu';
		var mine = flames.filter(function (f) { return f.kind === kind && f.caller.o; });
		var kids = {};
		if (mine.length && !data.diff)
			PerfrecTables.functionRows(mine.map(function (f) {
				var whole = Object.assign({}, f.caller, { weight: f.weight, count: f.count });
				return { tree: whole, title: f.title };
			}), names, t.has('event'), kind === 'offcpu', Infinity).rows.forEach(function (r) {
				kids[r.sym + '\t' + r.dso + '\t' + (t.has('event') ? r.event : '')] = r.children;
			});
		t.groupUnknown(function (key) { return kids[key]; });
	});

	/* A bin of F tracks' bins is kept when it starts in the range. */
	function inRange(bin, F) {
		if (selection.a < 0)
			return true;
		var start = tk.t0 + bin * F * tk.bin;
		return start >= selection.a && start < selection.b;
	}

	/* The range as the flame graph counts it (snapped to its bins), or
	 * as given without per-bin data. */
	function shownRange() {
		var f = flames[Number(which.value) || 0];
		return f && f.sel && tk ? snapped(f) : [selection.a, selection.b];
	}

	/* The counter groups' rows for the range [a, b): per row of the whole
	 * trace's table, the sum of its ticks (data.counters) whose snapshot
	 * time is in the range (whole ticks), and the rate over the time those
	 * ticks cover; raw and running are of the whole trace only (empty). */
	function counterRows(a, b) {
		var byName = {};
		data.counters.rows.forEach(function (r) { byName[r.g + '\t' + r.e] = r.t; });
		return tables.counters.whole.map(function (tr) {
			var row = {}, sum = 0, span = 0, counted = false, t, i;
			tables.counters.cols.forEach(function (c, j) {
				if (c === 'group' || c === 'event')
					row[c] = tr.cells[j] ? tr.cells[j].textContent : '';
			});
			t = byName[row.group + '\t' + row.event] || [];
			for (i = 0; i + 2 < t.length; i += 3) {
				if (t[i] < a || t[i] >= b || t[i + 2] < 0)
					continue;
				sum += t[i + 2];
				span += t[i] - t[i + 1];
				counted = true;
			}
			row.scaled = counted ? String(sum) : '-';
			row.per_sec = counted && span > 0 ? (sum * 1e9 / span).toFixed(2) : '-';
			return row;
		});
	}

	function showTables() {
		if (selection.a >= 0 && data.counters && tables.counters.table) {
			var cr = shownRange();
			tables.counters.show(counterRows(cr[0], cr[1]));
		} else {
			tables.counters.show(null);
		}
		var on = selActive() && tk && !data.diff;
		['report', 'offcpu'].forEach(function (which) {
			var t = tables[which], kind = which === 'report' ? 'samples' : 'offcpu';
			var mine = flames.filter(function (f) { return f.kind === kind && f.sel; });
			if (!on || !mine.length) {
				t.show(null);
				return;
			}
			var r = PerfrecTables.functionRows(mine.map(function (f) {
				return { tree: selectedTree(f), title: f.title };
			}), names, t.has('event'), kind === 'offcpu', top);
			t.show(r.rows, r.summary);
		});
		if (!on || !data.sched) {
			tables.sched.show(null);
			return;
		}
		tables.sched.show(PerfrecTables.taskRows(data.sched, tk, names, function (bin, tid, who) {
			return inRange(bin, data.sched.f) && (selection.tid < 0 || tid === selection.tid) &&
				(selection.pid < 0 || (who && who.pid === selection.pid));
		}, top));
	}

	/* ---- the selection: the timeline and the tracks set it, the flame
	 * graph follows, the address keeps it (#t=START,END&tid=N or &pid=N,
	 * ns from the trace start) so a link reopens the same view */
	var selWhat = byId('sel-what'), selClear = byId('sel-clear');

	function selFragment() {
		var parts = hosts ? ['host=' + encodeURIComponent(hosts[hostIndex])] : [];
		if (selection.a >= 0)
			parts.push('t=' + Math.round(selection.a) + ',' + Math.round(selection.b));
		if (selection.tid >= 0)
			parts.push('tid=' + selection.tid);
		if (selection.pid >= 0)
			parts.push('pid=' + selection.pid);
		return parts.join('&');
	}

	function trackName(tid, pid) {
		var name = null;
		(tk ? tk.procs : []).forEach(function (p) {
			if (pid >= 0 && p.pid === pid)
				name = names[p.name];
			p.t.forEach(function (t) {
				if (tid >= 0 && t.tid === tid)
					name = names[t.name];
			});
		});
		return name === null ? '' : String(name) + ' ';
	}

	function applySelection(fromAddress) {
		var parts = [];
		if (selection.a >= 0) {
			var r = shownRange();
			parts.push(U.seconds(r[0], 1e3) + ' \u2013 ' + U.seconds(r[1], 1e3) + ' (' +
				U.duration(r[1] - r[0]) + ')');
		}
		if (selection.tid >= 0)
			parts.push('thread ' + trackName(selection.tid, -1) + selection.tid);
		if (selection.pid >= 0)
			parts.push('process ' + trackName(-1, selection.pid) + selection.pid);
		selWhat.textContent = parts.length ? parts.join(', ') : 'the whole trace';
		selClear.disabled = !selActive();
		byId('tables-note').hidden = !selActive();
		if (flames.length)
			showFlame();
		showTables();
		var frag = selFragment();
		root.setAttribute('data-selection', frag);
		if (!fromAddress && location.hash.replace(/^#/, '') !== frag) {
			try {
				history.replaceState(null, '', frag ? '#' + frag : location.pathname + location.search);
			} catch (e) {
				location.hash = frag;
			}
		}
	}

	/* Reads the address's selection into the page. */
	function readAddress() {
		var h = location.hash.replace(/^#/, ''), m;
		selection = { a: -1, b: -1, tid: -1, pid: -1 };
		if ((m = /(?:^|&)t=(\d+),(\d+)/.exec(h)) && Number(m[2]) > Number(m[1])) {
			selection.a = Number(m[1]);
			selection.b = Number(m[2]);
		}
		if ((m = /(?:^|&)tid=(\d+)/.exec(h)))
			selection.tid = Number(m[1]);
		else if ((m = /(?:^|&)pid=(\d+)/.exec(h)))
			selection.pid = Number(m[1]);
		if (tl) {
			tl.range = selection.a >= 0 ? [selection.a - tl.d.t0, selection.b - tl.d.t0] : null;
			if (tracks)
				tracks.select(selection.tid >= 0 ? selection.tid : selection.pid,
					      selection.tid >= 0 ? -1 : selection.pid, selection.pid >= 0);
			tl.draw();
		}
		applySelection(true);
	}

	if (tl) {
		tl.onrange = function (a, b) {
			selection.a = a;
			selection.b = b;
			applySelection(false);
		};
		tl.onpick = function (p) {
			selection.tid = p.tid;
			selection.pid = p.tid >= 0 ? -1 : p.pid;
			applySelection(false);
		};
	}
	selClear.addEventListener('click', function () {
		selection = { a: -1, b: -1, tid: -1, pid: -1 };
		if (tl) {
			tl.range = null;
			if (tracks)
				tracks.select(-1, -1, false);
			tl.draw();
		}
		applySelection(false);
	});
	window.addEventListener('hashchange', function () {
		if (location.hash.replace(/^#/, '') !== selFragment())
			readAddress();
	});
	which.addEventListener('change', function () {
		applySelection(true);
	});
	readAddress();

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

	/* ms from the start of navigation to everything drawn: the
	 * benchmark's time to first paint (tests/bench/html_vs_report.sh) */
	root.setAttribute('data-ready-ms', String(Math.round(performance.now())));
	root.setAttribute('data-ready', '1');
})();
