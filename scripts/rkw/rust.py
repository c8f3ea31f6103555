"""Rust source facts, on a real parser: tree-sitter with tree-sitter-rust
(PyPI, pinned in versions.env, installed by `make setup` into the venv).

`Source(text)` parses one file once; its facts, with 0-based line numbers
(rows) and character offsets into `text`:

  masked()        the text with comments, string and char literals blanked
                  (newlines kept: offsets and rows are the text's)
  items()         (first row, last row, "fn" | "impl") of every `fn` with a
                  body and every `impl`, signature to closing brace
  use_rows()      the rows of `use` declarations
  path_attrs()    {row: path} of the `#[path = "..."]` attributes
  mod_decls()     the `mod x;` declarations: ModDecl(name, path, row, top)
  comment_rows()  the rows that hold comments and nothing else
  line_comments() (row, text) of the `//` comments
  todos()         (row, exercise number or None, text) of `TODO` comments
  anchors()       (row, "ANCHOR" | "ANCHOR_END", name) of mdbook's markers
  unsafe_sites()  every `unsafe` block, fn, impl, trait and macro
                  declaration (`unsafe(uninit) static`), with the comment that
                  says why it is sound (`// SAFETY:`, a `# Safety` section)
  errors()        the rows of the parser's ERROR and MISSING nodes

Everything macros hold is a token tree to the parser: an `unsafe { }` in
`try_pin_init!(..)` is found from its tokens, as rustc's macros see them.
"""

import re
from collections import namedtuple
from functools import cached_property

try:
    import tree_sitter
    import tree_sitter_rust
except ImportError as e:  # scripts/rkw/__init__.py's run() re-executes in the venv first
    raise ImportError(f"{e}: the Rust parser (tree-sitter, tree-sitter-rust) is not installed: run make setup") from e

LANGUAGE = tree_sitter.Language(tree_sitter_rust.language())
_PARSER = tree_sitter.Parser(LANGUAGE)

COMMENTS = {"line_comment", "block_comment"}
LITERALS = {"string_literal", "raw_string_literal", "char_literal"}
# mdbook's anchor markers (mdbook/src/utils/string.rs).
ANCHOR = re.compile(r"(ANCHOR(?:_END)?):\s*([\w_-]+)")
TODO = re.compile(r"\bTODO\b")
EXERCISE = re.compile(r"\bexercise\s+(\d+)", re.I)

ModDecl = namedtuple("ModDecl", "name path row top")
# kind: "block", "fn", "impl", "trait" or "decl" (a macro's `unsafe(..) x`);
# decl: the declaration's words for "decl" (`(uninit) static`); row: the
# `unsafe` keyword's; top: the first row of the comment (or doc) that goes
# with it; last: a block's closing brace, an item's header end; reason: the
# text after `SAFETY:` or of the `# Safety` section, None without one.
Unsafe = namedtuple("Unsafe", "kind decl row top last reason")


class Source:
    """One Rust file, parsed."""

    def __init__(self, text):
        self.text = text
        self.data = text.encode("utf-8")
        self.tree = _PARSER.parse(self.data)
        self.lines = text.split("\n")

    # ---- offsets --------------------------------------------------------------------
    @cached_property
    def _char_of(self):
        """Byte offset -> character offset (None: the text is ASCII)."""
        if len(self.data) == len(self.text):
            return None
        table = []
        for i, ch in enumerate(self.text):
            table.extend([i] * len(ch.encode("utf-8")))
        table.append(len(self.text))
        return table

    def offset(self, byte):
        return byte if self._char_of is None else self._char_of[byte]

    def span(self, node):
        """(start, end) character offsets of a node."""
        return self.offset(node.start_byte), self.offset(node.end_byte)

    # ---- the one walk over the tree -----------------------------------------------------
    @cached_property
    def _nodes(self):
        """{type: [node]} of the nodes the facts use, in the file's order."""
        want = COMMENTS | LITERALS | {"function_item", "function_signature_item", "impl_item", "use_declaration",
                                      "attribute_item", "mod_item", "unsafe", "ERROR"}
        found = {t: [] for t in want}
        found["MISSING"] = []
        cursor = self.tree.walk()
        while True:
            node = cursor.node
            if node.type in found:
                found[node.type].append(node)
            if node.is_missing:
                found["MISSING"].append(node)
            # A literal's or comment's insides are none of our business.
            if node.type not in COMMENTS and node.type not in LITERALS and cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return found

    def errors(self):
        return sorted({n.start_point[0] for n in self._nodes["ERROR"] + self._nodes["MISSING"]})

    # ---- comments and literals ----------------------------------------------------------
    def comments(self):
        """(start, end, text) of every comment."""
        out = []
        for n in self._nodes["line_comment"] + self._nodes["block_comment"]:
            a, b = self.span(n)
            out.append((a, b, self.text[a:b]))
        return sorted(out)

    def line_comments(self):
        """(row, text) of every `//` comment (`///`, `//!` too), without
        its newline."""
        out = []
        for n in self._nodes["line_comment"]:
            a, b = self.span(n)
            out.append((n.start_point[0], self.text[a:b].rstrip("\n")))
        return out

    @cached_property
    def _masked(self):
        out = list(self.text)
        for t in COMMENTS | LITERALS:
            for n in self._nodes[t]:
                a, b = self.span(n)
                for k in range(a, b):
                    if out[k] != "\n":
                        out[k] = " "
        return "".join(out)

    def masked(self):
        return self._masked

    def comment_rows(self):
        """Rows with a comment and no code (blank rows are not counted)."""
        masked = self._masked.split("\n")
        rows = set()
        for n in self._nodes["line_comment"] + self._nodes["block_comment"]:
            rows.update(range(n.start_point[0], n.end_point[0] + (n.end_point[1] > 0)))
        return {r for r in rows if r < len(masked) and not masked[r].strip() and self.lines[r].strip()}

    def todos(self):
        out = []
        for a, _, text in self.comments():
            for k, line in enumerate(text.split("\n")):
                if TODO.search(line):
                    m = EXERCISE.search(line)
                    out.append((self.text.count("\n", 0, a) + k, int(m.group(1)) if m else None, line.strip()))
        return out

    def anchors(self):
        out = []
        for a, _, text in self.comments():
            for k, line in enumerate(text.split("\n")):
                for m in ANCHOR.finditer(line):
                    out.append((self.text.count("\n", 0, a) + k, m.group(1), m.group(2)))
        return out

    # ---- items, uses, modules ---------------------------------------------------------
    def items(self):
        """(first row, last row, kind) of every `fn` with a body and every
        `impl` (its first row: the `fn`'s or `impl`'s, after attributes)."""
        out = [(n.start_point[0], n.end_point[0], "fn") for n in self._nodes["function_item"]]
        out += [(n.start_point[0], n.end_point[0], "impl") for n in self._nodes["impl_item"]]
        return sorted(out)

    def use_rows(self):
        rows = set()
        for n in self._nodes["use_declaration"]:
            rows.update(range(n.start_point[0], n.end_point[0] + 1))
        return rows

    def _path_of(self, attr_item):
        """The path of a `#[path = "..."]` attribute item, or None."""
        attr = attr_item.named_children[0] if attr_item.named_children else None
        if attr is None or attr.type != "attribute":
            return None
        name = attr.named_children[0] if attr.named_children else None
        value = attr.child_by_field_name("value")
        if name is None or name.text != b"path" or value is None or value.type != "string_literal":
            return None
        return "".join(c.text.decode("utf-8") for c in value.named_children if c.type == "string_content")

    def path_attrs(self):
        out = {}
        for n in self._nodes["attribute_item"]:
            p = self._path_of(n)
            if p is not None:
                out[n.start_point[0]] = p
        return out

    def mod_decls(self):
        """`mod x;` declarations (no body): name, the `#[path]` before it
        (None), its row and whether it is at the file's top level."""
        out = []
        for n in self._nodes["mod_item"]:
            if n.child_by_field_name("body") is not None:
                continue
            path, prev = None, n.prev_named_sibling
            while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
                if prev.type == "attribute_item" and path is None:
                    path = self._path_of(prev)
                prev = prev.prev_named_sibling
            name = n.child_by_field_name("name").text.decode("utf-8")
            out.append(ModDecl(name, path, n.start_point[0], n.parent.type == "source_file"))
        return out

    # ---- unsafe sites ---------------------------------------------------------------
    def unsafe_sites(self):
        masked = self._masked
        mlines = masked.splitlines()
        sites = []
        for node in self._nodes["unsafe"]:
            holder = node.parent.parent if node.parent.type == "function_modifiers" else node.parent
            if holder.type in ("function_type", "attribute"):
                continue  # `unsafe extern "C" fn(..)` is a type; `#[unsafe(..)]` an attribute
            start, end = self.span(node)
            n = node.start_point[0]
            after = masked[end:]
            rest = after.lstrip()
            decl = None
            if rest.startswith("{"):
                kind = "block"
                last = self._row_of(_block_end(masked, end + len(after) - len(rest)))
                reason = self._safety_comment(mlines, n)
                top = self._comment_block_above(n)[0]
            elif re.match(r"(?:extern\s+)?fn\b", rest) or rest.startswith("trait"):
                kind = "fn" if not rest.startswith("trait") else "trait"
                head = re.search(r"[{;]", after)
                last = self._row_of(end + (head.start() if head else 0))
                reason = self._safety_doc(n)
                top = self._doc_block_above(n)[0]
            elif rest.startswith("impl"):
                kind = "impl"
                head = re.search(r"[{;]", after)
                last = self._row_of(end + (head.start() if head else 0))
                reason = self._safety_comment(mlines, n)
                top = self._comment_block_above(n)[0]
            elif rest.startswith("("):
                # A macro's unsafe declaration, e.g. `global_lock!`'s
                # `unsafe(uninit) static X: ...`: the caller promises something.
                kind = "decl"
                m = re.match(r"\([^)]*\)\s*\w+", rest)
                decl = re.sub(r"\s+", " ", m.group(0)) if m else "(..)"
                head = re.search(r"[;{]", after)
                last = self._row_of(end + (head.start() if head else 0))
                reason = self._safety_comment(mlines, n)
                top = self._comment_block_above(n)[0]
            else:
                continue  # `unsafe` in another role
            sites.append(Unsafe(kind, decl, n, top, last, reason))
        return sites

    def _row_of(self, offset):
        return self.text.count("\n", 0, offset)

    def _comment_block_above(self, n):
        """The `//` comment rows (not `///`, `//!`) ending just above row n,
        over anchor rows: (first row, [texts])."""
        k, got = n - 1, []
        while k >= 0:
            s = self.lines[k].strip()
            if ANCHOR.search(s) and s.startswith("//"):
                k -= 1
                continue
            if s.startswith("//") and not s.startswith("///") and not s.startswith("//!"):
                got.append(s[2:].strip())
                k -= 1
                continue
            break
        return k + 1, got[::-1]

    def _doc_block_above(self, n):
        """The `///` doc rows above row n, over attributes and anchors."""
        k, got = n - 1, []
        while k >= 0:
            s = self.lines[k].strip()
            if s.startswith("///"):
                got.append(s[3:].strip() if not s[3:4] == " " else s[4:].rstrip())
            elif s.startswith("#[") or (s.startswith("//") and ANCHOR.search(s)):
                pass
            else:
                break
            k -= 1
        return k + 1, got[::-1]

    def _safety_comment(self, mlines, n):
        """The text after `SAFETY:` of the comment that documents the `unsafe`
        at row n, or None. The comment is the one just above the statement
        holding it: going up over the statement's earlier rows (code rows
        that neither end a statement nor hold another `unsafe`)."""
        k = n
        while True:
            first, texts = self._comment_block_above(k)
            if texts:
                for i, t in enumerate(texts):
                    if t.startswith("SAFETY:"):
                        return " ".join([t[len("SAFETY:"):]] + texts[i + 1:])
                return None
            k = first - 1  # the code row above
            if k < 0:
                return None
            code = mlines[k].rstrip()
            if not code.strip() or code.endswith((";", "}")) or re.search(r"\bunsafe\b", code):
                return None
            if k < n - 12:  # a statement this long is not what we meant
                return None

    def _safety_doc(self, n):
        """The `# Safety` section of the doc comment above row n, or None."""
        _, docs = self._doc_block_above(n)
        for i, d in enumerate(docs):
            if re.match(r"^#+\s*Safety\s*$", d):
                body = []
                for t in docs[i + 1:]:
                    if re.match(r"^#+\s", t):
                        break
                    if not t and body:
                        break
                    if t:
                        body.append(t)
                return " ".join(body) if body else None
        return None


def _block_end(masked, start):
    """Offset of the `}` closing the `{` at `start` (in masked text)."""
    d = 0
    for i in range(start, len(masked)):
        if masked[i] == "{":
            d += 1
        elif masked[i] == "}":
            d -= 1
            if d == 0:
                return i
    return len(masked) - 1


_cache = {}


def of(text):
    """The Source of a text (parsed once per process)."""
    if text not in _cache:
        _cache[text] = Source(text)
    return _cache[text]


def parse(path):
    """The Source of a file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return of(f.read())
