"""CodeIndex on small repositories in temporary directories, with a real ChromaDB store."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pilothouse.errors import UserInputError
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex

AUTH = '''"""Authentication for the web API."""

import hashlib

RETRY_BUDGET_SECONDS = 30


class PasswordHasher:
    """Hash and check passwords with a salt."""

    def __init__(self, salt: bytes) -> None:
        self.salt = salt

    def hash(self, password: str) -> str:
        return hashlib.sha256(self.salt + password.encode()).hexdigest()


def verify_password(hasher: PasswordHasher, password: str, stored: str) -> bool:
    """Check a login attempt against the stored password hash."""
    candidate = hasher.hash(password)
    return candidate == stored
'''

BILLING = """package billing

// Invoice is what a customer owes for one month.
type Invoice struct {
\tCustomer string
\tCents    int64
\tPaid     bool
}

// ChargeCard charges the customer's credit card for an invoice.
func ChargeCard(inv *Invoice, card string) error {
\tif inv.Paid {
\t\treturn nil
\t}
\treturn gateway.Charge(card, inv.Cents)
}
"""

README = """# Shop

An example shop used by the tests.

## Deploying

Run the release script, then watch the rollout in Argo CD until it is healthy.
"""

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-web
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: web
          image: shop/web:1.2.3
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "app").mkdir(parents=True)
    (root / "billing").mkdir()
    (root / "deploy").mkdir()
    (root / "app" / "auth.py").write_text(AUTH)
    (root / "billing" / "invoice.go").write_text(BILLING)
    (root / "README.md").write_text(README)
    (root / "deploy" / "web.yaml").write_text(DEPLOY)
    return root


@pytest.fixture
def index(tmp_path: Path, embeddings: MiniLMEmbeddings) -> CodeIndex:
    return CodeIndex(tmp_path / "store", embeddings)


def indexed_paths(index: CodeIndex) -> set[str]:
    return set(index.catalog().paths)


def test_index_then_retrieve_returns_the_right_file_lines_and_symbol(
    index: CodeIndex, repo: Path
) -> None:
    report = index.index_directory(repo)
    assert (report.files_indexed, report.files_skipped_unchanged, report.files_removed) == (4, 0, 0)
    assert report.chunks == report.total_chunks > 4
    assert report.root == str(repo.resolve())
    hits = index.retrieve_code_context("check a login attempt against the stored hash", k=3)
    top = hits[0]
    assert (top.path, top.symbol) == ("app/auth.py", "verify_password")
    assert AUTH.splitlines()[top.start_line - 1].startswith("def verify_password")
    assert top.text == "\n".join(AUTH.splitlines()[top.start_line - 1 : top.end_line])
    assert 0 < top.score <= 1 and hits == sorted(hits, key=lambda h: -h.score)
    go = index.retrieve_code_context("charge the credit card for an invoice", k=1)[0]
    assert (go.path, go.symbol) == ("billing/invoice.go", "ChargeCard")


def test_an_exact_identifier_is_found_by_keyword_even_when_meaningless_to_embeddings(
    index: CodeIndex, repo: Path
) -> None:
    index.index_directory(repo)
    hits = index.retrieve_code_context("RETRY_BUDGET_SECONDS", k=2)
    assert hits[0].path == "app/auth.py" and "RETRY_BUDGET_SECONDS = 30" in hits[0].text


def test_reindex_after_an_edit_touches_only_that_file(index: CodeIndex, repo: Path) -> None:
    index.index_directory(repo)
    unchanged = index.index_directory(repo)
    assert unchanged.files_indexed == unchanged.chunks == 0
    assert unchanged.files_skipped_unchanged == 4
    before = unchanged.total_chunks
    refund = (
        "\n// RefundInvoice gives the money back.\nfunc RefundInvoice(inv *Invoice) error {"
        "\n\tinv.Paid = false\n\treturn gateway.Refund(inv.Cents)\n}\n"
    )
    (repo / "billing" / "invoice.go").write_text(BILLING + refund)
    report = index.index_directory(repo)
    assert (report.files_indexed, report.files_skipped_unchanged, report.files_removed) == (1, 3, 0)
    assert report.total_chunks >= before
    hit = index.retrieve_code_context("give a customer their money back", k=1)[0]
    assert hit.symbol == "RefundInvoice"
    # The old version's chunks are gone, not duplicated.
    go_chunks = [r for r in index.catalog().records if r.path == "billing/invoice.go"]
    assert len({(r.start_line, r.end_line) for r in go_chunks}) == len(go_chunks)


def test_deleting_a_file_removes_its_chunks(index: CodeIndex, repo: Path) -> None:
    index.index_directory(repo)
    (repo / "app" / "auth.py").unlink()
    report = index.index_directory(repo)
    assert (report.files_indexed, report.files_removed) == (0, 1)
    assert "app/auth.py" not in indexed_paths(index)
    hits = index.retrieve_code_context("verify the password hash", k=10)
    assert all(h.path != "app/auth.py" for h in hits)


def test_an_interrupted_run_leaves_no_file_half_indexed(index: CodeIndex, repo: Path) -> None:
    index.index_directory(repo)
    collection = index.store.collection(repo.resolve(), create=False)
    assert collection is not None
    ids = [r.id for r in index.catalog().records if r.path == "app/auth.py"]
    assert len(ids) > 1
    collection.delete(ids=ids[:1])  # as if the run died between two writes
    report = index.index_directory(repo)
    assert report.files_indexed == 1
    assert len([r for r in index.catalog().records if r.path == "app/auth.py"]) == len(ids)


def test_gitignore_pruned_dirs_binaries_and_oversized_files_are_skipped(
    tmp_path: Path, embeddings: MiniLMEmbeddings, repo: Path
) -> None:
    (repo / ".gitignore").write_text("build/\n*.secret\n!keep.secret\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.py").write_text("def built():\n    return 1\n")
    (repo / "token.secret").write_text("hunter2\n")
    (repo / "keep.secret").write_text("not really a secret\n")
    (repo / "app" / ".gitignore").write_text("generated_*.py\n")
    (repo / "app" / "generated_client.py").write_text("def generated():\n    pass\n")
    for pruned in ("node_modules/lib", ".venv/lib", ".git"):
        (repo / pruned).mkdir(parents=True)
        (repo / pruned / "x.js").write_text("function x() { return 1; }\n")
    (repo / "logo.bin.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (repo / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    (repo / "huge.py").write_text("x = 1\n" * 20_000)
    index = CodeIndex(tmp_path / "store2", embeddings, max_file_bytes=64 * 1024)
    index.index_directory(repo)
    assert indexed_paths(index) == {
        "README.md", "app/auth.py", "billing/invoice.go", "deploy/web.yaml", "keep.secret",
        ".gitignore", "app/.gitignore",
    }


def test_indexing_a_subfolder_applies_the_checkouts_gitignore(
    index: CodeIndex, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".gitignore").write_text("*.generated.ts\nsrc/vendor/\n")
    (checkout / "src" / "vendor").mkdir(parents=True)
    (checkout / "src" / "api.ts").write_text("export function getUser(id: string) {\n}\n")
    (checkout / "src" / "api.generated.ts").write_text("export const schema = {};\n")
    (checkout / "src" / "vendor" / "lib.ts").write_text("export const lib = 1;\n")
    index.index_directory(checkout / "src")
    assert indexed_paths(index) == {"api.ts"}


def test_exclude_patterns_keep_files_out_and_remove_indexed_ones(
    index: CodeIndex, repo: Path
) -> None:
    index.index_directory(repo)
    report = index.index_directory(repo, exclude=["deploy/", "*.md"])
    assert report.files_removed == 2
    assert indexed_paths(index) == {"app/auth.py", "billing/invoice.go"}


def test_a_symlink_leading_outside_the_root_is_not_followed(
    index: CodeIndex, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def private_thing():\n    return 'outside the repo'\n")
    (repo / "link.py").symlink_to(outside)
    index.index_directory(repo)
    assert "link.py" not in indexed_paths(index)


def test_a_missing_directory_is_a_clear_user_error(index: CodeIndex, tmp_path: Path) -> None:
    with pytest.raises(UserInputError) as caught:
        index.index_directory(tmp_path / "nope")
    assert "does not exist" in caught.value.message and "nope" in caught.value.message
    assert caught.value.hint
    file = tmp_path / "file.txt"
    file.write_text("x")
    with pytest.raises(UserInputError, match="not a directory"):
        index.index_directory(file)


def test_retrieving_before_anything_is_indexed_says_to_index_first(index: CodeIndex) -> None:
    with pytest.raises(UserInputError) as caught:
        index.retrieve_code_context("anything")
    assert caught.value.hint and "index_directory" in caught.value.hint


def test_path_filter_by_glob_and_by_substring(index: CodeIndex, repo: Path) -> None:
    index.index_directory(repo)
    only_go = index.retrieve_code_context("password", k=5, path_filter="**/*.go")
    assert only_go and {h.path for h in only_go} == {"billing/invoice.go"}
    only_app = index.retrieve_code_context("deploy the shop", k=5, path_filter="app/")
    assert {h.path for h in only_app} == {"app/auth.py"}
    with pytest.raises(UserInputError, match="path_filter"):
        index.retrieve_code_context("x", path_filter="*.rs")


def test_find_files_for_named_paths_and_symbols_exact_first(index: CodeIndex, repo: Path) -> None:
    index.index_directory(repo)
    hints = index.find_files_for(
        "Why does verify_password in auth.py call PasswordHasher.hash, and what is ChargeCard?"
    )
    exact = [(h.path, h.symbol, h.match) for h in hints if h.match in {"path", "symbol"}]
    assert ("app/auth.py", "", "path") in exact
    assert ("app/auth.py", "verify_password", "symbol") in exact
    assert ("app/auth.py", "PasswordHasher", "symbol") in exact
    assert ("billing/invoice.go", "ChargeCard", "symbol") in exact
    assert hints[: len(exact)] == [h for h in hints if h.match in {"path", "symbol"}]
    verify = next(h for h in hints if h.symbol == "verify_password")
    assert AUTH.splitlines()[verify.start_line - 1].startswith("def verify_password")
    assert index.find_files_for("how does the weather look today?") == []


def test_the_index_persists_and_each_root_has_its_own_collection(
    tmp_path: Path, embeddings: MiniLMEmbeddings, repo: Path
) -> None:
    first = CodeIndex(tmp_path / "store", embeddings)
    first.index_directory(repo)
    other = tmp_path / "other"
    other.mkdir()
    (other / "tool.sh").write_text("#!/bin/sh\nbackup() {\n  tar czf /backup/db.tgz /var/db\n}\n")
    first.index_directory(other)
    second = CodeIndex(tmp_path / "store", embeddings)
    assert second.index_directory(repo).files_indexed == 0
    assert set(second.indexed_roots()) == {str(repo.resolve()), str(other.resolve())}
    hits = second.retrieve_code_context("back up the database", root=other)
    assert [h.path for h in hits] == ["tool.sh"]


def test_progress_counts_up_to_the_total(index: CodeIndex, repo: Path) -> None:
    calls: list[tuple[int, int]] = []
    index.index_directory(repo, progress=lambda done, total, _: calls.append((done, total)))
    assert calls[-1] == (4, 4)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_hits_spread_over_files_unless_only_one_file_matches(
    index: CodeIndex, tmp_path: Path
) -> None:
    root = tmp_path / "spread"
    root.mkdir()
    retries = "".join(
        f'def retry_policy_{i}(attempt):\n    """Retry backoff policy {i}."""\n'
        f"    delay = backoff(attempt) * {i}\n    return min(delay, 60)\n\n\n"
        for i in range(6)
    )
    (root / "retries.py").write_text(retries)
    (root / "client.py").write_text(
        'def call_with_retry(fn):\n    """Call fn, retrying with backoff."""\n'
        "    for attempt in range(5):\n        try:\n            return fn()\n"
        "        except OSError:\n            sleep(attempt)\n"
    )
    index.index_directory(root)
    paths = [h.path for h in index.retrieve_code_context("retry backoff policy", k=3)]
    assert sorted(paths) == ["client.py", "retries.py", "retries.py"]
    # With no third file to show, the slot goes back to the best file.
    paths = [h.path for h in index.retrieve_code_context("retry backoff policy", k=4)]
    assert sorted(paths) == ["client.py", "retries.py", "retries.py", "retries.py"]
    only_one = index.retrieve_code_context("retry backoff policy", k=4, path_filter="retries.py")
    assert [h.path for h in only_one] == ["retries.py"] * 4


def test_a_stopped_run_stores_no_more_and_removes_nothing_it_did_not_see(
    index: CodeIndex, repo: Path
) -> None:
    index.index_directory(repo)
    (repo / "README.md").unlink()
    stop = threading.Event()
    stop.set()
    report = index.index_directory(repo, stop=stop)
    assert not report.complete and report.files_removed == 0
    assert "README.md" in indexed_paths(index)
    finished = index.index_directory(repo)
    assert finished.complete and finished.files_removed == 1


def test_an_empty_query_is_refused(index: CodeIndex, repo: Path) -> None:
    index.index_directory(repo)
    with pytest.raises(UserInputError):
        index.retrieve_code_context("   ")
