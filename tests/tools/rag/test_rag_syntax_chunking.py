"""Chunking from tree-sitter syntax trees: names and line ranges per language, and the cases
line patterns got wrong (a declaration inside a string, a signature over several lines)."""

from __future__ import annotations

import textwrap

import pytest

from pilothouse.tools.rag import grammars
from pilothouse.tools.rag.chunking import MAX_LINES, Chunk, chunk_text


def chunks_of(path: str, source: str) -> list[Chunk]:
    return chunk_text(path, textwrap.dedent(source).lstrip("\n"))


def by_symbol(chunks: list[Chunk], symbol: str) -> Chunk:
    found = [c for c in chunks if c.symbol == symbol]
    assert len(found) == 1, f"{symbol!r} in {[c.symbol for c in chunks]}"
    return found[0]


GO_RAW_STRING = """
    package templates

    // usage is printed by -help; it shows Go code, which is not code of this file.
    const usage = `
    func Fake() error {
    type Phantom struct{}
    func (p *Phantom) Haunt() {}
    `

    func Render(name string) string {
        header := "func NotOne() {"
        body := strings.Repeat("-", len(name))
        return header + body
    }
"""


def test_go_raw_string_holding_declarations_is_not_cut_into_fake_definitions() -> None:
    chunks = chunks_of("templates/usage.go", GO_RAW_STRING)
    names = {n for c in chunks for n in c.names}
    symbols = {c.symbol for c in chunks}
    assert names.isdisjoint({"Fake", "Phantom", "Phantom.Haunt", "NotOne"})
    assert symbols.isdisjoint({"Fake", "Phantom", "Phantom.Haunt", "NotOne"})
    assert "usage" in names
    render = by_symbol(chunks, "Render")
    assert (render.start_line, render.end_line) == (10, 14)
    # The whole raw string stays in one chunk, with the constant it belongs to.
    holder = next(c for c in chunks if "usage" in c.names)
    assert "func Fake() error {" in holder.text and "func (p *Phantom) Haunt() {}" in holder.text


CPP_MULTILINE_SIGNATURE = """
    #include <string>
    #include <vector>

    namespace reg {

    // Looks a name up, at most `limit` matches.
    template <typename T>
    std::vector<T>
    Registry<T>::lookup(const std::string& name,
                        std::size_t limit) const {
      std::vector<T> found;
      collect(name, limit, found);
      return found;
    }

    }  // namespace reg
"""


def test_cpp_function_whose_signature_spans_several_lines_is_found() -> None:
    chunks = chunks_of("src/registry.cc", CPP_MULTILINE_SIGNATURE)
    lookup = next(c for c in chunks if "Registry::lookup" in c.names)
    assert lookup.symbol == "Registry::lookup"
    assert "lookup" in lookup.names
    assert lookup.start_line <= 6 and lookup.end_line >= 14
    assert "// Looks a name up" in lookup.text and "return found;" in lookup.text


#: (path, source, symbol, first line, last line): the second definition of each file, with the
#: comment or annotation above it, so its lines are its own and not merged with a neighbour.
KNOWN_SYMBOLS = [
    (
        "app/cache.py",
        """
        def warm(cache):
            for key in cache.keys():
                cache.touch(key)
            return len(cache)

        # Drops entries older than `age`.
        @traced
        def evict(cache, age):
            stale = [k for k, v in cache.items() if v.age > age]
            for key in stale:
                del cache[key]
            return stale
        """,
        "evict", 6, 12,
    ),
    (
        "cmd/serve.go",
        """
        package main

        func main() {
            s := NewServer(":8080")
            s.Start()
        }

        // Start listens until the process is stopped.
        func (s *Server) Start() error {
            s.mux = http.NewServeMux()
            s.mux.HandleFunc("/", s.index)
            return http.ListenAndServe(s.addr, s.mux)
        }
        """,
        "Server.Start", 8, 13,
    ),
    (
        "web/format.js",
        """
        export function pad(text, width) {
          const missing = width - text.length;
          const spaces = " ".repeat(Math.max(0, missing));
          return text + spaces;
        }

        /** Formats a byte count for people. */
        export const humanBytes = (count) => {
          const units = ["B", "KiB", "MiB"];
          const step = Math.min(2, Math.floor(Math.log2(count || 1) / 10));
          return `${(count / 1024 ** step).toFixed(1)} ${units[step]}`;
        };
        """,
        "humanBytes", 7, 12,
    ),
    (
        "web/router.ts",
        """
        export interface Route {
          path: string;
          handler: Handler;
          methods: string[];
        }

        // Matches a request against the routes, first match wins.
        export class Router {
          private routes: Route[] = [];

          match(path: string): Route | undefined {
            return this.routes.find((r) => r.path === path);
          }
        }
        """,
        "Router", 7, 14,
    ),
    (
        "web/Panel.tsx",
        """
        type Props = {
          title: string;
          open: boolean;
        };

        // A collapsible panel.
        export function Panel({ title, open }: Props) {
          const [shown, setShown] = useState(open);
          const toggle = () => setShown(!shown);
          return <section onClick={toggle}>{shown ? title : "..."}</section>;
        }
        """,
        "Panel", 6, 11,
    ),
    (
        "src/main/java/app/Billing.java",
        """
        package app;

        interface Ledger {
            void record(Invoice invoice);
        }

        /** Charges customers. */
        @Service
        public class Billing {
            private final Repo repo;

            public Invoice charge(Customer customer, long cents) {
                return repo.save(new Invoice(customer, cents));
            }
        }
        """,
        "Billing", 7, 15,
    ),
    (
        "src/cmd.rs",
        """
        use std::fmt;

        pub fn parse(line: &str) -> Command {
            let argv = split(line);
            Command { argv }
        }

        /// Shows the command as typed.
        #[allow(dead_code)]
        impl fmt::Display for Command {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "{}", self.argv.join(" "))
            }
        }
        """,
        "fmt::Display for Command", 8, 14,
    ),
    (
        "src/list.c",
        """
        #include <stdlib.h>

        typedef struct node {
          int value;
          struct node *next;
        } node_t;

        /* Frees every node of the list. */
        static void
        list_free(node_t *head)
        {
          while (head) { node_t *next = head->next; free(head); head = next; }
        }
        """,
        "list_free", 8, 13,
    ),
    (
        "src/shape.cpp",
        """
        #include <cmath>

        struct Point {
          double x;
          double y;
        };

        // Distance between two points.
        double Shape::distance(const Point& a,
                               const Point& b) const {
          double dx = a.x - b.x, dy = a.y - b.y;
          return std::sqrt(dx * dx + dy * dy);
        }
        """,
        "Shape::distance", 8, 13,
    ),
    (
        "scripts/release.sh",
        """
        #!/usr/bin/env bash
        set -euo pipefail
        IMAGE=app
        TAG=latest

        # Pushes the image.
        push() {
          docker tag "$IMAGE" "$IMAGE:$TAG"
          docker push "$IMAGE:$TAG"
        }
        """,
        "push", 6, 10,
    ),
    (
        "infra/main.tf",
        """
        terraform {
          required_version = ">= 1.5"
          backend "s3" {}
        }

        # Where the access logs go.
        resource "aws_s3_bucket" "logs" {
          bucket        = "acme-logs"
          force_destroy = false
        }
        """,
        "aws_s3_bucket.logs", 6, 10,
    ),
]


@pytest.mark.parametrize(
    ("path", "source", "symbol", "first", "last"),
    KNOWN_SYMBOLS,
    ids=[case[0].rsplit(".", 1)[-1] for case in KNOWN_SYMBOLS],
)
def test_known_symbol_is_chunked_with_its_name_and_lines(
    path: str, source: str, symbol: str, first: int, last: int
) -> None:
    chunks = chunks_of(path, source)
    chunk = by_symbol(chunks, symbol)
    assert (chunk.start_line, chunk.end_line) == (first, last)
    assert symbol in chunk.names
    lines = textwrap.dedent(source).lstrip("\n").splitlines()
    assert chunk.text == "\n".join(lines[first - 1 : last])


def test_every_parsed_language_has_its_grammar_installed() -> None:
    """The grammar wheels are real dependencies: none is fetched or built at run time."""
    for name in (*grammars.PARSED_LANGUAGES, "tsx"):
        tree = grammars.parse(name, "x", b"\n")
        assert tree.root_node is not None


def test_long_class_splits_at_its_methods_in_any_parsed_language() -> None:
    methods = "".join(
        f"\n    public int step{i}() {{\n" + "        total += 1;\n" * 10
        + "        return total;\n    }\n"
        for i in range(6)
    )
    source = f"package app;\n\npublic class Pipeline {{\n    private int total;\n{methods}}}\n"
    chunks = chunk_text("Pipeline.java", source)
    assert chunks[0].symbol == "Pipeline" and "Pipeline.step0" in chunks[0].names
    assert [c.symbol for c in chunks[1:]] == [f"Pipeline.step{i}" for i in range(1, 6)]
    assert all(c.end_line - c.start_line < MAX_LINES for c in chunks)
    assert chunks[-1].end_line == len(source.splitlines())


def test_definitions_inside_guards_namespaces_and_script_wrappers_are_found() -> None:
    header = (
        "#ifndef QUEUE_H\n#define QUEUE_H\nnamespace q {\n"
        + "".join(f"int pop_{i}(Queue* q) {{\n  int v = q->head;\n  q->head++;\n  return v;\n}}\n"
                  for i in range(3))
        + "}  // namespace q\n#endif\n"
    )
    names = {n for c in chunk_text("queue.hpp", header) for n in c.names}
    assert {"pop_0", "pop_1", "pop_2"} <= names
    script = (
        '"use strict";\n(function () {\n'
        + "".join(f"  function show{i}(node) {{\n    node.hidden = false;\n    node.focus();\n"
                  "    return node;\n  }\n" for i in range(3))
        + "})();\n"
    )
    names = {n for c in chunk_text("app.js", script) for n in c.names}
    assert {"show0", "show1", "show2"} <= names


def test_python_syntax_error_keeps_the_definitions_that_parse() -> None:
    source = (
        "def ok():\n    a = 1\n    b = 2\n    return a + b\n\n"
        "def broken(:\n    pass\n\n"
        "def fine():\n    c = 3\n    d = 4\n    return c * d\n"
    )
    chunks = chunk_text("broken.py", source)
    assert {"ok", "fine"} <= {n for c in chunks for n in c.names}
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 12
