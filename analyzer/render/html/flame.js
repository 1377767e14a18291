/*
 * flame.js - the flame graph of one weighted stack tree, drawn as an
 * icicle (the root on top, callees below; in the inverted tree, the
 * functions that were running on top and their callers below).
 *
 * A tree comes from analyzer/render/html.c as columns in pre-order:
 *   n  name id (into data.names), -1 for a pruned placeholder
 *   k  tag: 0 task, 1 user function, 2 kernel function, 3 placeholder
 *   d  depth (0 = the root's children)
 *   w  weight through the node (period, or ns), s its own (self) weight
 *   c  stacks through the node (samples)
 *   b  (html --diff only) the base profile's weight through the node
 *   p  [index, nodes it stands for] of each placeholder
 * A differential tree (meta.base set: the base root's weight) keeps the
 * new profile's widths and colors each frame by the change of its share,
 * new share - base share: red grew, blue shrank, the deepest color for
 * the largest change in the tree, white for none.
 * Frames are absolutely placed divs with the name as their text, so the
 * names of what is drawn are in the document (find in page, screen
 * readers); a frame narrower than half a pixel is left out with its
 * subtree.
 */
var PerfrecFlame = (function () {
	var U = PerfrecUtil;
	var ROW = 18;
	var KINDS = ['task', 'function', 'kernel function', 'smaller frames'];

	/* Builds node objects with absolute offsets x (in weight units). */
	function decode(tree, names, weight, count, base) {
		var root = { name: 'all', tag: -1, depth: -1, w: weight, s: 0, c: count,
			     b: base || 0, x: 0, parent: null, kids: [], next: 0, pruned: 0 };
		var stack = [root], nodes = [], maxDepth = 0, pruned = {};
		var i;
		for (i = 0; i < tree.p.length; i++)
			pruned[tree.p[i][0]] = tree.p[i][1];
		for (i = 0; i < tree.n.length; i++) {
			var d = tree.d[i], parent = stack[d];
			if (!parent)
				break;   /* malformed: a depth jump */
			var id = tree.n[i];
			var node = { name: id >= 0 ? String(names[id]) : '', tag: tree.k[i], depth: d,
				     w: tree.w[i], s: tree.s[i], c: tree.c[i],
				     b: tree.b ? tree.b[i] : 0, x: parent.next,
				     parent: parent, kids: [], next: parent.next,
				     pruned: pruned[i] || 0 };
			parent.next += node.w;
			parent.kids.push(node);
			stack[d + 1] = node;
			stack.length = d + 2;
			nodes.push(node);
			if (d > maxDepth)
				maxDepth = d;
		}
		var sum = 0;
		for (i = 0; i < root.kids.length; i++)
			sum += root.kids[i].w;
		root.s = Math.max(0, root.w - sum);
		/* the largest change of share, for the color scale */
		var maxChange = 0;
		for (i = 0; base && i < nodes.length; i++)
			maxChange = Math.max(maxChange, Math.abs(change(nodes[i], root)));
		return { root: root, nodes: nodes, maxDepth: maxDepth, maxChange: maxChange };
	}

	/* New share - base share of a node, as a fraction of each root. */
	function change(n, root) {
		return (root.w ? n.w / root.w : 0) - (root.b ? n.b / root.b : 0);
	}

	/* Red grew, blue shrank; lightness from 97% (no change) down to 55%
	 * (the largest change in the tree). */
	function diffColor(n, tree) {
		if (n.tag === -1 || n.tag === 3)
			return n.tag === -1 ? '#c5cad3' : '';
		var d = change(n, tree.root), k = tree.maxChange ? Math.abs(d) / tree.maxChange : 0;
		return 'hsl(' + (d >= 0 ? 0 : 220) + ',80%,' + Math.round(97 - 42 * k) + '%)';
	}

	function color(n) {
		if (n.tag === -1)   /* the root */
			return '#c5cad3';
		if (n.tag === 0 || n.tag === 3)   /* tasks, pruned: by class */
			return '';
		var h = U.hash(n.name);
		if (n.tag === 2)   /* kernel: blue-green */
			return 'hsl(' + Math.round(175 + 35 * h) + ',45%,' + Math.round(62 + 10 * h) + '%)';
		/* user: red to yellow, as flame graphs have always been */
		return 'hsl(' + Math.round(5 + 45 * h) + ',80%,' + Math.round(60 + 8 * h) + '%)';
	}

	function Flame(el, tip) {
		this.el = el;
		this.tip = tip;
		this.tree = null;
		this.zoom = null;
		this.re = null;
		this.onsearch = null;
		var self = this;
		el.addEventListener('mousemove', function (ev) {
			var t = ev.target.closest ? ev.target.closest('.fr') : null;
			if (t && t.perfrecNode)
				self.hover(ev, t.perfrecNode);
			else
				self.tip.hide();
		});
		el.addEventListener('mouseleave', function () { self.tip.hide(); });
		el.addEventListener('click', function (ev) {
			var t = ev.target.closest ? ev.target.closest('.fr') : null;
			if (t && t.perfrecNode && t.perfrecNode.tag !== 3)
				self.zoomTo(t.perfrecNode);
		});
	}

	/* meta: { unit: 'period' | 'ns', title, base: the base root's weight
	 * (a differential tree; undefined otherwise) } */
	Flame.prototype.show = function (tree, names, meta, weight, count) {
		this.tree = decode(tree, names, weight, count, meta.base);
		this.meta = meta;
		this.zoom = this.tree.root;
		this.render();
		this.search(this.query || '');
	};

	Flame.prototype.zoomTo = function (node) {
		this.zoom = node || (this.tree && this.tree.root);
		this.render();
	};

	Flame.prototype.share = function (n) {
		var r = this.tree.root;
		return r.w ? n.w / r.w : r.c ? n.c / r.c : 0;
	};

	Flame.prototype.render = function () {
		var el = this.el;
		U.clear(el);
		this.tip.hide();
		if (!this.tree)
			return;
		var W = el.clientWidth || 800, z = this.zoom, frag = document.createDocumentFragment();
		var deepest = 0, self = this;
		function put(n, left, width, anc) {
			var div = document.createElement('div');
			div.className = 'fr t' + (n.tag < 0 ? 0 : n.tag) + (anc ? ' anc' : '') +
				(self.re && n.tag !== 3 && self.re.test(n.name) ? ' match' : '');
			div.style.left = left.toFixed(1) + 'px';
			div.style.width = Math.max(width, 1).toFixed(1) + 'px';
			div.style.top = ((n.depth + 1) * ROW) + 'px';
			var c = self.meta.base !== undefined ? diffColor(n, self.tree) : color(n);
			if (c)
				div.style.background = c;
			if (width > 24)
				div.textContent = self.label(n);
			div.perfrecNode = n;
			frag.appendChild(div);
			if (n.depth + 1 > deepest)
				deepest = n.depth + 1;
		}
		/* the zoomed node's ancestors span the width */
		for (var a = z.parent; a; a = a.parent)
			put(a, 0, W, true);
		var total = z.w || 1, scale = W / total;
		if (!z.w)   /* a tree of zero weights: widths by count */
			scale = 0;
		var todo = [z];
		while (todo.length) {
			var n = todo.pop();
			var width = scale ? n.w * scale : (z.c ? n.c / z.c * W : 0);
			if (n !== z && width < 0.5)
				continue;
			var left = scale ? (n.x - z.x) * scale : 0;
			put(n, left, n === z ? W : width, false);
			for (var i = n.kids.length - 1; i >= 0; i--)
				todo.push(n.kids[i]);
		}
		el.style.height = ((deepest + 1) * ROW + 2) + 'px';
		el.appendChild(frag);
		/* what is shown, for the inspector and tests */
		el.setAttribute('data-zoom', z.name);
		el.setAttribute('data-total', this.tree.root.w + ',' + this.tree.root.c);
	};

	Flame.prototype.label = function (n) {
		if (n.tag === 3)
			return '\u2026 ' + U.grouped(n.pruned) + ' smaller frames';
		if (n.tag === -1)
			return 'all (' + this.amount(n) + ')';
		return n.name;
	};

	Flame.prototype.amount = function (n) {
		if (this.meta.unit === 'ns')
			return U.duration(n.w);
		return U.grouped(n.c) + (n.c === 1 ? ' sample' : ' samples');
	};

	Flame.prototype.hover = function (ev, n) {
		var lines = [];
		var kind = n.tag >= 0 ? KINDS[n.tag] : 'every stack of ' + this.meta.title;
		lines.push(kind);
		lines.push(this.amount(n) + ', ' + U.pct(this.share(n), 1) + ' of all');
		if (this.zoom !== this.tree.root && n !== this.zoom && this.zoom.w)
			lines.push(U.pct(n.w / this.zoom.w, 1) + ' of the zoomed frame');
		if (this.meta.base !== undefined && n.tag !== 3) {
			var r = this.tree.root, d = 100 * change(n, r);
			lines.push('new: ' + U.pct(r.w ? n.w / r.w : 0, 1) + ', base: ' +
				   U.pct(r.b ? n.b / r.b : 0, 1) + ' of all');
			lines.push('change: ' + (d >= 0 ? '+' : '\u2212') + Math.abs(d).toFixed(2) +
				   ' points');
		}
		if (n.tag === 3)
			lines.push('each under ' + U.pct(this.fraction || 0, 1) +
				   ' of all: merged to keep the page small');
		else if (n.tag !== 0 && n.tag !== -1)
			lines.push('self: ' + U.pct(this.tree.root.w ? n.s / this.tree.root.w : 0, 1));
		this.tip.show(ev, n.tag === 3 ? this.label(n) : n.name, lines);
	};

	/* Highlights frames whose name matches q (a regex; plain text when
	 * it is not one) and reports the share of the weight they cover,
	 * each stack counted once (the topmost match on its path). */
	Flame.prototype.search = function (q) {
		this.query = q;
		this.re = null;
		if (q) {
			try {
				this.re = new RegExp(q, 'i');
			} catch (e) {
				this.re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
			}
		}
		var frames = this.el.querySelectorAll('.fr');
		for (var i = 0; i < frames.length; i++) {
			var n = frames[i].perfrecNode;
			frames[i].classList.toggle('match', !!(this.re && n && n.tag !== 3 &&
							  this.re.test(n.name)));
		}
		if (!this.onsearch)
			return;
		if (!this.re || !this.tree) {
			this.onsearch(null);
			return;
		}
		var w = 0, c = 0, hits = 0, todo = this.tree.root.kids.slice();
		while (todo.length) {
			var m = todo.pop();
			if (m.tag !== 3 && this.re.test(m.name)) {
				w += m.w;
				c += m.c;
				hits++;
				continue;
			}
			for (var j = 0; j < m.kids.length; j++)
				todo.push(m.kids[j]);
		}
		var r = this.tree.root;
		this.onsearch({ share: r.w ? w / r.w : r.c ? c / r.c : 0, frames: hits });
	};

	return { Flame: Flame };
})();
