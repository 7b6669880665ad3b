"""What counts as a definition in each parsed language, and what it is called.

Names are what a person types: `Server.Start` for a Go method, `Registry::lookup` (and
`lookup`) for a C++ member defined out of line, `fmt::Display for Command` for a Rust trait
impl, `aws_s3_bucket.logs` for a Terraform resource. Node types are those of the grammar wheels
pinned in constraints.txt.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from pilothouse.tools.rag.syntax import (
    Definition,
    LanguageRules,
    field,
    named,
    rewrap,
    text,
    unwrap,
)

# --- Python -------------------------------------------------------------------------------

def _python(node: Node) -> Definition | None:
    if node.type == "decorated_definition":
        return rewrap(node, _python(field(node, "definition") or node))
    if node.type == "function_definition":
        return named(node, "function")
    if node.type == "class_definition":
        return named(node, "type", "body")
    return None


def _python_member(node: Node) -> Definition | None:
    """Methods only: a nested class stays in its class's header, as `ast` chunking had it."""
    found = _python(node)
    return found if found is not None and found.kind == "function" else None


def _python_names(node: Node) -> list[str]:
    """Module-level names an assignment binds (`A = B = 1`, `x: int`, `n += 1`)."""
    names: list[str] = []
    for stmt in node.named_children if node.type == "expression_statement" else []:
        while stmt.type in ("assignment", "augmented_assignment"):
            left = field(stmt, "left")
            if left is not None and left.type == "identifier":
                names.append(text(left))
            right = field(stmt, "right")
            if right is None:
                break
            stmt = right
    return names


# --- Go -----------------------------------------------------------------------------------

def _go(node: Node) -> Definition | None:
    if node.type == "function_declaration":
        return named(node, "function")
    if node.type == "method_declaration":
        receiver = field(node, "receiver")
        params = receiver.named_children if receiver is not None else []
        kind = next((field(p, "type") for p in params), None)
        owner = re.sub(r"\[.*", "", text(kind)).lstrip("*").strip()
        name = text(field(node, "name"))
        return Definition(node, f"{owner}.{name}" if owner else name, "function")
    if node.type == "type_declaration":
        specs = [text(field(s, "name")) for s in node.named_children if field(s, "name")]
        return Definition(node, specs[0], "type", names=tuple(specs)) if specs else None
    return None


def _go_names(node: Node) -> list[str]:
    if node.type not in ("var_declaration", "const_declaration"):
        return []
    specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
    for group in (c for c in node.named_children if c.type == "var_spec_list"):
        specs += group.named_children
    return [text(n) for s in specs for n in s.children_by_field_name("name")]


# --- JavaScript / TypeScript --------------------------------------------------------------

_JS_FUNCTION_VALUES = frozenset({
    "arrow_function", "function_expression", "function", "generator_function", "class",
})
_JS_TEST_CALLS = frozenset({"describe", "it", "test"})


def _js(node: Node) -> Definition | None:
    kind = node.type
    if kind in ("export_statement", "ambient_declaration"):
        return rewrap(node, _js(unwrap(node, "declaration", "value") or node))
    if kind in ("function_declaration", "generator_function_declaration", "function_signature"):
        return named(node, "function") if kind != "function_signature" else None
    if kind in ("class_declaration", "abstract_class_declaration", "class"):
        found = named(node, "type", "body")
        return found or Definition(node, "default", "type", "default", field(node, "body"))
    if kind in ("interface_declaration", "type_alias_declaration", "enum_declaration"):
        return named(node, "type")
    if kind in ("internal_module", "module"):
        return named(node, "type", "body")
    if kind in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        value = field(declarators[0], "value") if len(declarators) == 1 else None
        if value is not None and value.type in _JS_FUNCTION_VALUES:
            return Definition(node, text(field(declarators[0], "name")), "function")
        return None
    if kind == "expression_statement" and node.named_children:
        inner = node.named_children[0]
        if inner.type == "internal_module":
            return rewrap(node, _js(inner))
        if inner.type == "call_expression" and text(field(inner, "function")) in _JS_TEST_CALLS:
            args = field(inner, "arguments")
            first = args.named_children[0] if args and args.named_children else None
            if first is not None and first.type in ("string", "template_string"):
                return Definition(node, text(first).strip("'\"`"), "function")
    return None


def _js_member(node: Node) -> Definition | None:
    if node.type in ("method_definition", "method_signature", "abstract_method_signature"):
        return named(node, "function") if node.type == "method_definition" else None
    if node.type in ("public_field_definition", "field_definition"):
        value = field(node, "value")
        name = text(field(node, "name") or field(node, "property"))
        if value is not None and value.type in _JS_FUNCTION_VALUES and name:
            return Definition(node, name, "function")
        return None
    return _js(node)


def _js_iife_body(node: Node) -> Node | None:
    """The body of `(function () { ... })();`, the wrapper of a whole browser script."""
    call = node.named_children[0] if node.type == "expression_statement" else None
    if call is None or call.type != "call_expression":
        return None
    function = field(call, "function")
    while function is not None and function.type == "parenthesized_expression":
        function = function.named_children[0] if function.named_children else None
    if function is None or function.type not in ("function_expression", "arrow_function"):
        return None
    return field(function, "body")


def _js_names(node: Node) -> list[str]:
    if node.type == "export_statement":
        return _js_names(unwrap(node, "declaration") or node) if node.named_children else []
    if node.type not in ("lexical_declaration", "variable_declaration"):
        return []
    declarators = (c for c in node.named_children if c.type == "variable_declarator")
    return [text(n) for d in declarators if (n := field(d, "name")) and n.type == "identifier"]


# --- Java ---------------------------------------------------------------------------------

_JAVA_TYPES = frozenset({
    "class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
    "annotation_type_declaration",
})


def _java(node: Node) -> Definition | None:
    if node.type in _JAVA_TYPES:
        return named(node, "type", "body")
    if node.type in ("method_declaration", "constructor_declaration"):
        return named(node, "function")
    return None


# --- Rust ---------------------------------------------------------------------------------

_RUST_TYPES = frozenset({"struct_item", "enum_item", "union_item", "type_item"})


def _rust(node: Node) -> Definition | None:
    if node.type == "function_item":
        return named(node, "function")
    if node.type in _RUST_TYPES or node.type == "macro_definition":
        return named(node, "type")
    if node.type in ("trait_item", "mod_item"):
        return named(node, "type", "body")
    if node.type == "impl_item":
        kind, trait = field(node, "type"), field(node, "trait")
        base = field(kind, "type") if kind is not None and kind.type == "generic_type" else kind
        owner = text(base).rsplit("::", 1)[-1]
        symbol = f"{text(trait)} for {text(kind)}" if trait is not None else text(kind)
        return Definition(node, symbol, "type", owner, field(node, "body"))
    return None


def _rust_names(node: Node) -> list[str]:
    return [text(field(node, "name"))] if node.type in ("const_item", "static_item") else []


# --- C / C++ ------------------------------------------------------------------------------

_DECLARATOR_WRAPPERS = frozenset({
    "pointer_declarator", "reference_declarator", "function_declarator",
    "parenthesized_declarator", "attributed_declarator", "array_declarator", "init_declarator",
})
_C_RECORDS = frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"})


def declared_name(node: Node | None) -> str:
    """The name a C/C++ declarator declares: `Registry<T>::lookup` -> `Registry::lookup`."""
    while node is not None and node.type in _DECLARATOR_WRAPPERS:
        node = field(node, "declarator")
    return re.sub(r"<[^<>]*>", "", text(node)).replace(" ", "")


def _c(node: Node) -> Definition | None:
    kind = node.type
    if kind == "template_declaration":
        inner = next((c for c in node.named_children if c.type != "template_parameter_list"), None)
        return rewrap(node, _c(inner)) if inner is not None else None
    if kind == "function_definition":
        name = declared_name(field(node, "declarator"))
        # `Registry::lookup` defined out of its class is also found as plain `lookup`.
        bare = (name.rsplit("::", 1)[-1],) if "::" in name else ()
        return Definition(node, name, "function", names=bare) if name else None
    if kind in _C_RECORDS:
        return named(node, "type", "body") if field(node, "body") else None
    if kind in ("type_definition", "declaration"):
        record = field(node, "type")
        if record is None or record.type not in _C_RECORDS or field(record, "body") is None:
            return None
        name = declared_name(field(node, "declarator")) if kind == "type_definition" else ""
        name = name or text(field(record, "name"))
        return Definition(node, name, "type", name, field(record, "body")) if name else None
    return None


def _c_names(node: Node) -> list[str]:
    if node.type in ("preproc_def", "preproc_function_def"):
        return [text(field(node, "name"))]
    if node.type == "declaration":
        return [n for d in node.children_by_field_name("declarator") if (n := declared_name(d))]
    return []


# --- shell and HCL ------------------------------------------------------------------------

def _shell(node: Node) -> Definition | None:
    return named(node, "function") if node.type == "function_definition" else None


def _shell_names(node: Node) -> list[str]:
    if node.type == "declaration_command":
        return [n for c in node.named_children for n in _shell_names(c)]
    return [text(field(node, "name"))] if node.type == "variable_assignment" else []


def _hcl(node: Node) -> Definition | None:
    if node.type != "block" or not node.named_children:
        return None
    block_type, *rest = node.named_children
    labels = [text(c).strip('"') for c in rest if c.type in ("string_lit", "identifier")]
    return Definition(node, ".".join(labels) or text(block_type), "type")


def _hcl_names(node: Node) -> list[str]:
    return [text(node.named_children[0])] if node.type == "attribute" else []


_C_TRANSPARENT = frozenset({
    "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
    "linkage_specification", "declaration_list", "namespace_definition",
})
_JS_RULES = LanguageRules(_js, _js_member, _js_names, opens=_js_iife_body)

RULES: dict[str, LanguageRules] = {
    # Methods only, and no bare names: the chunks `ast` produced before, which recall was
    # measured on, are reproduced exactly.
    "python": LanguageRules(_python, _python_member, _python_names, bare_member_names=False),
    "go": LanguageRules(_go, loose_names=_go_names),
    "javascript": _JS_RULES,
    "typescript": _JS_RULES,
    "java": LanguageRules(_java, transparent=frozenset({"enum_body_declarations"})),
    "rust": LanguageRules(_rust, loose_names=_rust_names),
    "c": LanguageRules(_c, loose_names=_c_names, transparent=_C_TRANSPARENT),
    "cpp": LanguageRules(_c, loose_names=_c_names, transparent=_C_TRANSPARENT),
    "shell": LanguageRules(_shell, loose_names=_shell_names),
    "hcl": LanguageRules(_hcl, loose_names=_hcl_names, transparent=frozenset({"body"})),
}
