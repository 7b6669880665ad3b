"""Chunking: definitions become chunks, per language, with correct lines and names."""

from __future__ import annotations

import itertools
import textwrap

import pytest

from pilothouse.tools.rag.boundaries import language_for
from pilothouse.tools.rag.chunking import MAX_LINES, OVERLAP_LINES, Chunk, chunk_text


def chunks_of(path: str, source: str) -> list[Chunk]:
    return chunk_text(path, textwrap.dedent(source).lstrip("\n"))


def symbols(chunks: list[Chunk]) -> list[str]:
    return [c.symbol for c in chunks]


def lines_of(chunk: Chunk, source: str) -> str:
    text = textwrap.dedent(source).lstrip("\n").splitlines()
    return "\n".join(text[chunk.start_line - 1 : chunk.end_line])


PYTHON = '''
    """Module doc."""

    import os

    LIMIT = 10
    NAME = "x"


    # Why this helper exists.
    @cache
    @other(arg=1)
    def helper(a, b):
        """Add."""
        total = a + b
        return total


    class Small:
        """A small class."""

        attr = 1

        def method(self):
            return self.attr


    async def fetch(url):
        async with client() as c:
            response = await c.get(url)
            return response.json()
'''


def test_python_definitions_with_decorators_comments_and_module_code() -> None:
    chunks = chunks_of("pkg/mod.py", PYTHON)
    assert symbols(chunks) == ["", "helper", "Small", "fetch"]
    module, helper, small, fetch = chunks
    assert {"LIMIT", "NAME"} <= set(module.names)
    # The comment and both decorators belong to the function they describe.
    assert lines_of(helper, PYTHON).splitlines()[0] == "# Why this helper exists."
    assert "@other(arg=1)" in helper.text and helper.text.rstrip().endswith("return total")
    assert set(small.names) == {"Small", "Small.method"}
    assert fetch.text.startswith("async def fetch")
    for chunk in chunks:
        assert chunk.text == lines_of(chunk, PYTHON)
        assert chunk.language == "python" and chunk.path == "pkg/mod.py"


def test_tiny_definitions_join_a_neighbour_and_keep_their_names() -> None:
    source = "import os\n\ndef one():\n    return 1\n\ndef two():\n    return 2\n"
    (chunk,) = chunk_text("tiny.py", source)
    assert chunk.start_line == 1 and chunk.end_line == 7
    assert {"one", "two"} <= set(chunk.names)


def test_long_python_class_splits_into_header_and_methods() -> None:
    body = "".join(
        f"\n    def step_{i}(self):\n" + "        value = 1\n" * 10 for i in range(8)
    )
    source = 'class Pipeline:\n    """Runs steps."""\n' + body
    chunks = chunk_text("p.py", source)
    assert chunks[0].symbol == "Pipeline" and "Pipeline.step_0" in chunks[0].names
    assert [c.symbol for c in chunks[1:]] == [f"Pipeline.step_{i}" for i in range(1, 8)]
    assert all(c.end_line - c.start_line < MAX_LINES for c in chunks)


def test_long_function_becomes_overlapping_windows_that_cover_every_line() -> None:
    source = "def huge():\n" + "".join(f"    x{i} = {i}\n" for i in range(150))
    chunks = chunk_text("h.py", source)
    assert len(chunks) == 3
    assert all(c.symbol == "huge" for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 151
    for before, after in itertools.pairwise(chunks):
        assert after.start_line == before.end_line - OVERLAP_LINES + 1
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert covered == set(range(1, 152))


def test_python_with_a_syntax_error_still_yields_chunks() -> None:
    chunks = chunk_text("broken.py", "def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    assert chunks and chunks[0].start_line == 1 and chunks[-1].end_line == 5


TYPESCRIPT = """
    import { x } from "./x";

    /** Builds the agent. */
    export async function buildAgent(settings: Settings): Promise<Agent> {
      const a = 1;
      const b = 2;
      return make(a, b);
    }

    export interface AgentOptions {
      name: string;
      retries: number;
      verbose: boolean;
    }

    export class Router extends Base {
      private routes = new Map<string, Handler>();

      async route(request: Request): Promise<Response> {
        const handler = this.routes.get(request.url);
        if (!handler) {
          throw new Error("no route");
        }
        return handler(request);
      }
    }
"""


def test_typescript_functions_interfaces_classes_and_methods() -> None:
    chunks = chunks_of("web/agent.ts", TYPESCRIPT)
    names = {n for c in chunks for n in c.names}
    assert {"buildAgent", "AgentOptions", "Router", "route"} <= names
    build = next(c for c in chunks if "buildAgent" in c.names)
    assert "/** Builds the agent. */\nexport async function buildAgent" in build.text
    assert all(c.language == "typescript" for c in chunks)


GO = """
    package server

    import "net/http"

    // Server serves the API.
    type Server struct {
        addr string
        mux  *http.ServeMux
        log  Logger
    }

    // Start listens on the address.
    func (s *Server) Start() error {
        s.mux = http.NewServeMux()
        s.mux.HandleFunc("/", s.index)
        return http.ListenAndServe(s.addr, s.mux)
    }

    func NewServer(addr string) *Server {
        s := &Server{addr: addr}
        s.log = defaultLogger()
        return s
    }
"""


def test_go_types_functions_and_methods_with_receivers() -> None:
    chunks = chunks_of("server.go", GO)
    by_symbol = {c.symbol: c for c in chunks}
    assert {"Server", "Server.Start", "NewServer"} <= set(by_symbol)
    assert by_symbol["Server.Start"].text.startswith("// Start listens")


RUST = """
    use std::fmt;

    /// A parsed command.
    #[derive(Debug, Clone)]
    pub struct Command {
        argv: Vec<String>,
        env: Vec<(String, String)>,
    }

    impl fmt::Display for Command {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "{}", self.argv.join(" "))
        }
    }

    pub fn parse(line: &str) -> Result<Command, Error> {
        let argv = split(line)?;
        let env = Vec::new();
        Ok(Command { argv, env })
    }
"""


def test_rust_items_keep_their_attributes_and_doc_comments() -> None:
    chunks = chunks_of("src/cmd.rs", RUST)
    names = {n for c in chunks for n in c.names}
    assert {"Command", "parse"} <= names
    assert any(n.startswith("fmt::Display for Command") for n in names)
    command = next(c for c in chunks if "Command" in c.names)
    assert command.text.startswith("use std::fmt;") or "/// A parsed command." in command.text
    assert "#[derive(Debug, Clone)]" in command.text


JAVA = """
    package app;

    @Service
    public class BillingService {
        private final Repo repo;

        public BillingService(Repo repo) {
            this.repo = repo;
        }

        @Transactional
        public Invoice charge(Customer customer, long cents) {
            Invoice invoice = new Invoice(customer, cents);
            repo.save(invoice);
            return invoice;
        }
    }
"""


def test_java_classes_and_methods_with_annotations() -> None:
    chunks = chunks_of("BillingService.java", JAVA)
    names = {n for c in chunks for n in c.names}
    assert {"BillingService", "charge"} <= names
    charge = next(c for c in chunks if "charge" in c.names)
    assert "@Transactional" in charge.text


def test_shell_functions() -> None:
    source = (
        "#!/usr/bin/env bash\nset -euo pipefail\n\n"
        "# Build the image.\nbuild() {\n  docker build -t app .\n  docker push app\n}\n\n"
        "function deploy {\n  kubectl apply -f k8s/\n  kubectl rollout status deploy/app\n}\n"
    )
    chunks = chunk_text("scripts/release.sh", source)
    names = {n for c in chunks for n in c.names}
    assert {"build", "deploy"} <= names
    assert next(c for c in chunks if "build" in c.names).text.count("# Build the image.") == 1


def test_yaml_manifests_split_per_kubernetes_document() -> None:
    source = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments-api\nspec:\n"
        "  replicas: 3\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: payments-svc\n"
        "spec:\n  ports:\n    - port: 80\n"
    )
    chunks = chunk_text("deploy/payments.yaml", source)
    assert [c.symbol for c in chunks] == ["Deployment/payments-api", "Service/payments-svc"]
    assert chunks[1].start_line == 7


def test_yaml_config_splits_at_top_level_keys() -> None:
    source = "".join(f"{key}:\n" + "  a: 1\n  b: 2\n  c: 3\n  d: 4\n" for key in ("jobs", "env"))
    assert [c.symbol for c in chunk_text("ci.yml", source)] == ["jobs", "env"]


def test_markdown_headings_ignore_fenced_code() -> None:
    source = (
        "# Title\n\nIntro text here.\nMore intro.\nEven more.\n\n"
        "## Install\n\n```bash\n# not a heading\npip install x\n```\nThen run it.\n\n"
        "## Usage\n\nCall it.\nWith flags.\nAnd options.\n"
    )
    chunks = chunk_text("README.md", source)
    assert [c.symbol for c in chunks] == ["Title", "Install", "Usage"]


def test_unknown_text_falls_back_to_line_windows() -> None:
    source = "".join(f"line {i}\n" for i in range(130))
    chunks = chunk_text("notes.txt", source)
    assert chunks[0].language == "text" and chunks[0].start_line == 1
    assert chunks[-1].end_line == 130


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert chunk_text("empty.py", "") == []
    assert chunk_text("blank.md", "\n  \n\n") == []


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("a.py", "python"), ("b.tsx", "typescript"), ("c.mjs", "javascript"), ("d.go", "go"),
        ("e.rs", "rust"), ("F.java", "java"), ("g.sh", "shell"), ("h.yml", "yaml"),
        ("README.md", "markdown"), ("Dockerfile", "dockerfile"), ("Makefile", "makefile"),
        ("main.tf", "hcl"), ("LICENSE", "text"), (".env", "text"),
    ],
)
def test_language_detection(name: str, language: str) -> None:
    assert language_for(name) == language
