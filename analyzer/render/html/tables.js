/*
 * tables.js - the server-rendered tables, made to follow the selection.
 *
 * The page holds each table's rows for the whole trace (rendered by the
 * analyzer, as the report and sched commands print them) and, for a
 * selection, the binned data it recomputes them from: the flame graphs'
 * trees per (time bin, thread, process, box) for the top-functions
 * tables (page.js's selectedTree()), and per (time bin, thread) on-CPU
 * time and switch-ins for the tasks table. A Table keeps its whole-trace
 * rows and puts computed ones in their place (same columns, same
 * formats), or the whole-trace rows back.
 *
 * Call order: new Table(block) once per table block (data-doc="NAME"),
 * then show(rows, summary) for a selection or show(null) to restore.
 */
var PerfrecTables = (function () {
	var U = PerfrecUtil;

	/* block: a <div data-doc>; section: the data-section of its table */
	function Table(block, section) {
		this.block = block;
		this.table = block ? block.querySelector('table.t[data-section="' + section + '"]') : null;
		this.cols = [];
		this.numeric = [];
		this.whole = null;
		this.summary = {};
		if (!this.table)
			return;
		var self = this;
		Array.prototype.forEach.call(this.table.querySelectorAll('thead th'), function (th) {
			self.cols.push(th.getAttribute('data-col'));
			self.numeric.push(th.classList.contains('n'));
		});
		this.whole = Array.prototype.slice.call(this.table.tBodies[0].rows);
		/* the summary's values (kv table: th key, td value) */
		var kv = block.querySelector('table.kv[data-section="summary"]');
		Array.prototype.forEach.call(kv ? kv.rows : [], function (tr) {
			var th = tr.querySelector('th'), td = tr.querySelector('td');
			if (th && td)
				self.summary[th.textContent] = { td: td, whole: td.textContent };
		});
	}

	Table.prototype.has = function (col) {
		return this.cols.indexOf(col) >= 0;
	};

	/* rows: objects of cell texts by column name (missing: empty), or
	 * null for the whole trace's rows; summary: values by key */
	Table.prototype.show = function (rows, summary) {
		if (!this.table)
			return;
		var body = this.table.tBodies[0], self = this, k;
		U.clear(body);
		if (!rows) {
			this.whole.forEach(function (tr) { body.appendChild(tr); });
			for (k in this.summary)
				this.summary[k].td.textContent = this.summary[k].whole;
			this.table.removeAttribute('data-selected');
			return;
		}
		rows.forEach(function (r) {
			var tr = document.createElement('tr');
			self.cols.forEach(function (c, i) {
				var td = document.createElement('td');
				if (self.numeric[i])
					td.className = 'n';
				td.textContent = r[c] === undefined ? '' : String(r[c]);
				tr.appendChild(td);
			});
			body.appendChild(tr);
		});
		for (k in this.summary)
			this.summary[k].td.textContent = summary && k in summary ? String(summary[k]) :
				this.summary[k].whole;
		this.table.setAttribute('data-selected', String(rows.length));
	};

	/* The object of a row whose symbol is an address (the analyzer names
	 * a frame without a symbol "[obj]+0x1f", "[kernel.kallsyms]+0x1f",
	 * or "0x7f..." without an object: then ''), else null. */
	function unknownIn(sym, dso) {
		if (dso === '[unknown]')
			return /^0x[0-9a-f]+$/.test(sym) ? '' : null;
		var pre = (dso.charAt(0) === '[' ? dso : '[' + dso + ']') + '+0x';
		return sym.indexOf(pre) === 0 && /^[0-9a-f]+$/.test(sym.slice(pre.length)) ? dso : null;
	}

	/* The page's name for the unknown code of an object (html.c's
	 * frame_label()). */
	function unknownName(dso) {
		return dso ? '[unknown] in ' + dso : '[unknown]';
	}

	function num(text) {
		return parseFloat(String(text).replace(/[,%]/g, '')) || 0;
	}

	/* Groups the whole trace's rows of addresses into one row per object
	 * ("[unknown] in OBJ"), as the flame graph shows them: samples,
	 * period, off-CPU ms and blocks summed, self recomputed from the
	 * period over the summary's total; children (a stack through two
	 * addresses of one object counts once) from children(key) -- the
	 * flame graph's tree, "sym\tdso\tevent" -> a percentage -- or, where
	 * the tree lost it to pruning, the largest of the rows'. Rows are
	 * then ordered by children as the analyzer orders them. */
	Table.prototype.groupUnknown = function (children) {
		if (!this.table)
			return;
		var self = this, col = {}, rows = [], groups = {}, grouped = 0;
		this.cols.forEach(function (c, i) { col[c] = i; });
		if (!('sym' in col) || !('dso' in col))
			return;
		var total = this.summary.total_period ? num(this.summary.total_period.whole) : 0;
		this.whole.forEach(function (tr) {
			var cells = Array.prototype.map.call(tr.cells, function (td) { return td.textContent; });
			var obj = unknownIn(cells[col.sym], cells[col.dso]);
			if (obj === null) {
				rows.push({ tr: tr, cells: cells });
				return;
			}
			grouped++;
			var key = unknownName(obj) + '\t' + cells[col.dso] + '\t' +
				('event' in col ? cells[col.event] : '');
			var g = groups[key];
			if (!g) {
				g = groups[key] = { tr: null, cells: cells.slice(), key: key };
				g.cells[col.sym] = unknownName(obj);
				rows.push(g);
				return;
			}
			['samples', 'period', 'blocks'].forEach(function (c) {
				if (c in col)
					g.cells[col[c]] = String(num(g.cells[col[c]]) + num(cells[col[c]]));
			});
			['offcpu_ms', 'children_ms'].forEach(function (c) {
				if (c in col)
					g.cells[col[c]] = (num(g.cells[col[c]]) + num(cells[col[c]])).toFixed(3);
			});
			if (col.overhead !== undefined)
				g.cells[col.overhead] = (num(g.cells[col.overhead]) + num(cells[col.overhead])).toFixed(2) + '%';
			if (col.children !== undefined && num(cells[col.children]) > num(g.cells[col.children]))
				g.cells[col.children] = cells[col.children];
		});
		if (!grouped)
			return;
		rows.forEach(function (g) {
			if (g.tr)
				return;
			if (total && 'period' in col)
				g.cells[col.overhead] = pct2(num(g.cells[col.period]), total);
			var c = children(g.key);
			if (c !== undefined && col.children !== undefined)
				g.cells[col.children] = c;
			g.tr = document.createElement('tr');
			g.cells.forEach(function (text, i) {
				var td = document.createElement('td');
				if (self.numeric[i])
					td.className = 'n';
				td.textContent = text;
				g.tr.appendChild(td);
			});
		});
		var by = col.children !== undefined ? col.children : col.overhead;
		rows.sort(function (a, b) {
			return num(b.cells[by]) - num(a.cells[by]) ||
				num(b.cells[col.overhead]) - num(a.cells[col.overhead]);
		});
		this.whole = rows.map(function (g) { return g.tr; });
		this.table.setAttribute('data-grouped', String(grouped));
		this.show(null);
	};

	/* As the analyzer's tables print a percentage ("%.2f" and a sign). */
	function pct2(part, total) {
		return (total ? 100 * part / total : 0).toFixed(2) + '%';
	}

	/* report --children --sort sym,dso[,event] rows of selected trees:
	 * entries [{tree, title}] (trees in flame.js's column form, with
	 * "o", each box's object), weights of one unit. A function is a
	 * (symbol, object[, event]); its children weight counts each stack
	 * once however often the function is on it, its self weight and
	 * samples those of the stacks that ended in it, as report counts. */
	function functionRows(entries, names, withEvent, offcpu, top) {
		var by = {}, list = [], total = 0, samples = 0;
		entries.forEach(function (e, ei) {
			var t = e.tree, n = t.n.length, kidc = [], stack = [], path = [], onPath = {}, i;
			total += t.weight;
			samples += t.count;
			for (i = 0; i < n; i++) {
				kidc.push(0);
				if (t.d[i] > 0)
					kidc[stack[t.d[i] - 1]] += t.c[i];
				stack[t.d[i]] = i;
			}
			for (i = 0; i < n; i++) {
				while (path.length > t.d[i]) {
					var gone = path.pop();
					if (gone !== null)
						onPath[gone]--;
				}
				var key = t.k[i] === 0 || t.k[i] === 3 || !t.w[i] ? null :
					t.n[i] + ',' + t.o[i] + (withEvent ? ',' + ei : '');
				path.push(key);
				if (key === null)
					continue;
				var f = by[key];
				if (!f) {
					f = by[key] = { sym: String(names[t.n[i]]),
							dso: t.o[i] >= 0 ? String(names[t.o[i]]) : '[unknown]',
							event: e.title, children: 0, self: 0, samples: 0 };
					list.push(f);
				}
				f.self += t.s[i];
				f.samples += t.c[i] - kidc[i];
				if (!onPath[key])
					f.children += t.w[i];
				onPath[key] = (onPath[key] || 0) + 1;
			}
		});
		list.sort(function (a, b) {
			return b.children - a.children || b.self - a.self || b.samples - a.samples ||
				(a.dso < b.dso ? -1 : a.dso > b.dso) || (a.sym < b.sym ? -1 : a.sym > b.sym);
		});
		var rows = list.slice(0, top).map(function (f) {
			var r = { children: pct2(f.children, total), overhead: pct2(f.self, total),
				  sym: f.sym, dso: f.dso, event: f.event };
			if (offcpu) {
				r.children_ms = (f.children / 1e6).toFixed(3);
				r.offcpu_ms = (f.self / 1e6).toFixed(3);
				r.blocks = f.samples;
			} else {
				r.samples = f.samples;
				r.period = f.self;
			}
			return r;
		});
		return { rows: rows, summary: offcpu ? {} :
			 { samples_shown: samples, total_period: total } };
	}

	/* sched's tasks rows of a selection: data.sched's entries
	 * [bin, tid, on-CPU ns, switch-ins] (bins F tracks' bins wide) in
	 * the bins in(bin) keeps; threads named from the tracks; sorted by
	 * on-CPU time as the table is. */
	function taskRows(sc, tk, names, keep, top) {
		var who = {}, by = {}, list = [], e = sc.e, i;
		tk.procs.forEach(function (p) {
			p.t.forEach(function (t) {
				who[t.tid] = { pid: p.pid, comm: String(names[t.name]) };
			});
		});
		for (i = 0; i + 3 < e.length; i += 4) {
			if (!keep(e[i], e[i + 1], who[e[i + 1]]))
				continue;
			var r = by[e[i + 1]];
			if (!r) {
				var w = who[e[i + 1]] || { pid: 0, comm: '?' };
				r = by[e[i + 1]] = { comm: w.comm, pid: w.pid, tid: e[i + 1], on: 0, ins: 0 };
				list.push(r);
			}
			r.on += e[i + 2];
			r.ins += e[i + 3];
		}
		list.sort(function (a, b) { return b.on - a.on || b.ins - a.ins || a.tid - b.tid; });
		return list.slice(0, top).map(function (r) {
			return { comm: r.comm, pid: r.pid, tid: r.tid, oncpu_ms: (r.on / 1e6).toFixed(3),
				 switch_ins: r.ins };
		});
	}

	return { Table: Table, functionRows: functionRows, taskRows: taskRows };
})();
