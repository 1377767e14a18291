/*
 * calltree.js - the flame graph's tree as text, beside it: a call tree
 * (expandable rows, total and self of each call path) and a functions
 * list (each function's self and total over all its call paths, a
 * function inside itself counted once, as `report --children` counts).
 * Both draw whatever tree the flame graph shows: the caller tree, the
 * callee (inverted) one, or the caller tree of the selected samples
 * (page.js), in flame.js's column form (n, k, d, w, s, c, p).
 * Only the rows of open nodes are in the document, so a tree of 16384
 * nodes costs a few rows until opened.
 */
var PerfrecCallTree = (function () {
	var U = PerfrecUtil;
	var MAX_FUNCS = 200;

	function CallTree(treeEl, fnEl) {
		this.treeEl = treeEl;
		this.fnEl = fnEl;
		this.tree = null;
	}

	CallTree.prototype.nameOf = function (i) {
		var t = this.tree, id = t.n[i];
		if (t.k[i] === 3)
			return '\u2026 smaller frames';
		return id >= 0 && id < this.names.length ? String(this.names[id]) : '?';
	};

	CallTree.prototype.amount = function (w) {
		return this.unit === 'ns' ? U.duration(w) : U.grouped(w);
	};

	/* tree: columns; weight: the root's (the shares' denominator);
	 * inverted: the callee tree (leaves at the top) */
	CallTree.prototype.show = function (tree, names, unit, weight, inverted) {
		var n = tree.n.length, stack = [], i;
		this.tree = tree;
		this.inverted = !!inverted;
		this.names = names;
		this.unit = unit;
		this.weight = weight || 0;
		this.kids = [];
		this.top = [];
		for (i = 0; i < n; i++)
			this.kids.push([]);
		for (i = 0; i < n; i++) {
			var d = tree.d[i];
			if (tree.w[i] > 0)
				(d > 0 ? this.kids[stack[d - 1]] : this.top).push(i);
			stack[d] = i;
		}
		/* siblings heaviest first (a selection changes the order) */
		var w = tree.w;
		function order(a, b) {
			return w[b] - w[a] || a - b;
		}
		this.top.sort(order);
		this.kids.forEach(function (k) { k.sort(order); });
		/* open the heaviest path a few levels down, as a start */
		this.open = {};
		for (var list = this.top, depth = 0; list.length && depth < 8; depth++) {
			this.open[list[0]] = true;
			list = this.kids[list[0]];
		}
		this.renderTree();
		this.renderFunctions();
	};

	function cell(tr, text, cls) {
		var td = document.createElement('td');
		td.textContent = text;
		if (cls)
			td.className = cls;
		tr.appendChild(td);
		return td;
	}

	function head(table, cols) {
		var thead = document.createElement('thead'), tr = document.createElement('tr');
		cols.forEach(function (c) {
			var th = document.createElement('th');
			th.textContent = c[0];
			if (c[1])
				th.className = c[1];
			tr.appendChild(th);
		});
		thead.appendChild(tr);
		table.appendChild(thead);
	}

	CallTree.prototype.renderTree = function () {
		var self = this, el = this.treeEl, t = this.tree, W = this.weight;
		U.clear(el);
		var table = document.createElement('table');
		table.className = 'ct';
		head(table, [['Call path'], ['Total', 'n'], ['Self', 'n']]);
		var body = document.createElement('tbody');
		function row(i, depth) {
			var tr = document.createElement('tr'), kids = self.kids[i];
			tr.setAttribute('data-node', String(i));
			tr.setAttribute('data-w', String(t.w[i]));
			var name = cell(tr, '');
			name.style.paddingLeft = (4 + 12 * depth) + 'px';
			var tog = document.createElement('span');
			tog.className = 'ct-tog';
			tog.textContent = kids.length ? (self.open[i] ? '\u25be' : '\u25b8') : '\u00a0';
			name.appendChild(tog);
			name.appendChild(document.createTextNode(self.nameOf(i)));
			name.className = 'ct-name t' + t.k[i];
			name.title = self.nameOf(i);
			if (kids.length) {
				tr.className = 'ct-open';
				tr.addEventListener('click', function () {
					self.open[i] = !self.open[i];
					self.renderTree();
				});
			}
			cell(tr, U.pct(t.w[i], W), 'n').title = self.amount(t.w[i]);
			var own = self.inverted ? 0 : t.s[i];
			cell(tr, own ? U.pct(own, W) : '', 'n').title = self.amount(own);
			body.appendChild(tr);
			if (self.open[i])
				kids.forEach(function (k) { row(k, depth + 1); });
		}
		this.top.forEach(function (i) { row(i, 0); });
		table.appendChild(body);
		el.appendChild(table);
	};

	/* Per function (tasks and placeholders left out): self is the sum of
	 * its nodes' self; total the sum of its nodes' weights, but not of a
	 * node under another node of the same function (recursion). */
	CallTree.prototype.functions = function () {
		var t = this.tree, n = t.n.length, by = {}, path = [], onPath = {}, i;
		for (i = 0; i < n; i++) {
			var d = t.d[i];
			while (path.length > d) {
				var gone = path.pop();
				if (gone !== null)
					onPath[gone]--;
			}
			var key = t.k[i] === 0 || t.k[i] === 3 ? null : this.nameOf(i);
			path.push(key);
			if (key === null)
				continue;
			var f = by[key] || (by[key] = { name: key, tag: t.k[i], self: 0, total: 0 });
			/* in the inverted tree a function ran itself where it
			 * is a root: the stack's leaf */
			f.self += this.inverted ? (d === 0 ? t.w[i] : 0) : t.s[i];
			if (!onPath[key])
				f.total += t.w[i];
			onPath[key] = (onPath[key] || 0) + 1;
		}
		return Object.keys(by).map(function (k) { return by[k]; })
			.filter(function (f) { return f.total > 0; })
			.sort(function (a, b) { return b.total - a.total || b.self - a.self ||
				(a.name < b.name ? -1 : a.name > b.name); });
	};

	CallTree.prototype.renderFunctions = function () {
		var self = this, el = this.fnEl, W = this.weight;
		U.clear(el);
		var all = this.functions();
		var table = document.createElement('table');
		table.className = 'ct fn';
		head(table, [['Function'], ['Total', 'n'], ['Self', 'n']]);
		var body = document.createElement('tbody');
		all.slice(0, MAX_FUNCS).forEach(function (f) {
			var tr = document.createElement('tr');
			tr.setAttribute('data-name', f.name);
			tr.setAttribute('data-total', String(f.total));
			tr.setAttribute('data-self', String(f.self));
			cell(tr, f.name, 'ct-name t' + f.tag).title = f.name;
			cell(tr, U.pct(f.total, W), 'n').title = self.amount(f.total);
			cell(tr, f.self ? U.pct(f.self, W) : '', 'n').title = self.amount(f.self);
			if (self.onpick)
				tr.addEventListener('click', function () { self.onpick(f.name); });
			body.appendChild(tr);
		});
		table.appendChild(body);
		el.appendChild(table);
		if (all.length > MAX_FUNCS) {
			var more = document.createElement('p');
			more.className = 'note';
			more.textContent = U.grouped(all.length - MAX_FUNCS) + ' lighter functions not listed.';
			el.appendChild(more);
		}
	};

	return { CallTree: CallTree };
})();
