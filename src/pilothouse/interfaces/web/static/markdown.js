// A small, safe markdown renderer for answers: tables, code, lists, headings, emphasis, links.
//
// It builds DOM nodes and sets only textContent and a few vetted attributes, never innerHTML:
// whatever a model or a tool result says, it is shown as text, so "<script>" or an
// "onerror=" attribute in an answer cannot run. Links keep only http(s) targets.
"use strict";

(function () {
  const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
  const FENCE = /^\s*(```+|~~~+)\s*([\w#+.-]*)\s*$/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const BULLET = /^\s*[-*+]\s+(.*)$/;
  const NUMBERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
  const QUOTE = /^\s*>\s?(.*)$/;
  const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
  // Code spans first, so "**" inside `code` stays literal.
  const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(.+?)\*\*|__(.+?)__|\*(\S(?:.*?\S)?)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;

  function element(tag, className) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    return node;
  }

  function inline(parent, text) {
    let last = 0;
    for (const match of text.matchAll(INLINE)) {
      if (match.index > last) parent.append(text.slice(last, match.index));
      if (match[1]) {
        const code = element("code");
        code.textContent = match[2];
        parent.append(code);
      } else if (match[3] !== undefined || match[4] !== undefined) {
        const strong = element("strong");
        inline(strong, match[3] !== undefined ? match[3] : match[4]);
        parent.append(strong);
      } else if (match[5] !== undefined) {
        const em = element("em");
        inline(em, match[5]);
        parent.append(em);
      } else if (/^https?:\/\//i.test(match[7])) {
        const link = element("a");
        link.href = match[7];
        link.rel = "noopener noreferrer";
        link.target = "_blank";
        inline(link, match[6]);
        parent.append(link);
      } else {
        parent.append(match[0]);
      }
      last = match.index + match[0].length;
    }
    if (last < text.length) parent.append(text.slice(last));
  }

  // A unified diff's lines by kind, by the rules of interfaces/diff_text.py: a "--- " line
  // followed by "+++ " is a file header (a removed line may start with "--"), "@@" a hunk.
  const DIFF_LANGUAGES = new Set(["diff", "patch", "udiff"]);
  const DIFF_LABELS = { add: "added", del: "removed", hunk: "hunk", file: "file", context: "" };

  function lineKinds(lines) {
    const kinds = [];
    lines.forEach((line, i) => {
      const next = i + 1 < lines.length ? lines[i + 1] : "";
      if (line.startsWith("--- ") && next.startsWith("+++ ")) kinds.push("file");
      else if (line.startsWith("+++ ") && kinds[i - 1] === "file") kinds.push("file");
      else if (line.startsWith("@@")) kinds.push("hunk");
      else if (line.startsWith("+")) kinds.push("add");
      else if (line.startsWith("-")) kinds.push("del");
      else kinds.push("context");
    });
    return kinds;
  }

  // One block line per diff line, its kind as a class; the line keeps its "+"/"-" marker, so
  // it reads without colour, and its title names the kind for a pointer or a screen reader.
  function diff(lines) {
    const pre = element("pre", "diff");
    const code = element("code", "language-diff");
    const kinds = lineKinds(lines);
    lines.forEach((line, i) => {
      const row = element("span", `diff-line diff-${kinds[i]}`);
      if (DIFF_LABELS[kinds[i]]) row.title = DIFF_LABELS[kinds[i]];
      row.textContent = line || " ";
      code.append(row);
    });
    pre.append(code);
    return pre;
  }

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
    const cells = [];
    let cell = "";
    for (let i = 0; i < row.length; i += 1) {
      if (row[i] === "\\" && row[i + 1] === "|") {
        cell += "|";
        i += 1;
      } else if (row[i] === "|") {
        cells.push(cell.trim());
        cell = "";
      } else {
        cell += row[i];
      }
    }
    cells.push(cell.trim());
    return cells;
  }

  function alignment(cell) {
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    if (left && right) return "center";
    if (right) return "right";
    return left ? "left" : "";
  }

  function isTableStart(lines, i) {
    return lines[i].includes("|") && i + 1 < lines.length && lines[i + 1].includes("-") &&
      TABLE_SEPARATOR.test(lines[i + 1]);
  }

  function table(lines, start) {
    const header = splitRow(lines[start]);
    const aligns = splitRow(lines[start + 1]).map(alignment);
    const wrapper = element("div", "table-scroll");
    const node = element("table", "md-table");
    const head = element("thead");
    const headRow = element("tr");
    header.forEach((text, column) => {
      const th = element("th");
      if (aligns[column]) th.style.textAlign = aligns[column];
      inline(th, text);
      headRow.append(th);
    });
    head.append(headRow);
    node.append(head);
    const body = element("tbody");
    let i = start + 2;
    for (; i < lines.length && lines[i].includes("|") && lines[i].trim(); i += 1) {
      const cells = splitRow(lines[i]);
      const row = element("tr");
      for (let column = 0; column < header.length; column += 1) {
        const td = element("td");
        if (aligns[column]) td.style.textAlign = aligns[column];
        inline(td, cells[column] || "");
        row.append(td);
      }
      body.append(row);
    }
    node.append(body);
    wrapper.append(node);
    return [wrapper, i];
  }

  function list(lines, start, pattern, ordered) {
    const node = element(ordered ? "ol" : "ul");
    let i = start;
    let item = null;
    while (i < lines.length) {
      const match = lines[i].match(pattern);
      if (match) {
        item = element("li");
        if (ordered && !node.childElementCount && match[1] !== "1") node.start = Number(match[1]);
        inline(item, ordered ? match[2] : match[1]);
        node.append(item);
      } else if (item && /^\s{2,}\S/.test(lines[i])) {
        item.append(" ");
        inline(item, lines[i].trim());
      } else {
        break;
      }
      i += 1;
    }
    return [node, i];
  }

  function startsBlock(lines, i) {
    const line = lines[i];
    return FENCE.test(line) || HEADING.test(line) || BULLET.test(line) || NUMBERED.test(line) ||
      QUOTE.test(line) || RULE.test(line) || isTableStart(lines, i);
  }

  function blocks(target, lines) {
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {
        i += 1;
        continue;
      }
      const fence = line.match(FENCE);
      if (fence) {
        const body = [];
        i += 1;
        while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
        i += 1;
        if (DIFF_LANGUAGES.has(fence[2].toLowerCase())) {
          target.append(diff(body));
          continue;
        }
        const code = element("code");
        if (fence[2]) code.className = `language-${fence[2]}`;
        code.textContent = body.join("\n");
        const pre = element("pre");
        pre.append(code);
        target.append(pre);
        continue;
      }
      const heading = line.match(HEADING);
      if (heading) {
        // Answers sit inside a chat bubble: "#" starts at h3 so it never shouts over the page.
        const node = element(`h${Math.min(6, heading[1].length + 2)}`);
        inline(node, heading[2]);
        target.append(node);
        i += 1;
        continue;
      }
      if (RULE.test(line)) {
        target.append(element("hr"));
        i += 1;
        continue;
      }
      let built = null;
      if (isTableStart(lines, i)) built = table(lines, i);
      else if (BULLET.test(line)) built = list(lines, i, BULLET, false);
      else if (NUMBERED.test(line)) built = list(lines, i, NUMBERED, true);
      if (built) {
        target.append(built[0]);
        i = built[1];
        continue;
      }
      if (QUOTE.test(line)) {
        const quoted = [];
        while (i < lines.length && QUOTE.test(lines[i])) quoted.push(lines[i++].match(QUOTE)[1]);
        const node = element("blockquote");
        blocks(node, quoted);
        target.append(node);
        continue;
      }
      const paragraph = element("p");
      let first = true;
      while (i < lines.length && lines[i].trim() && (first || !startsBlock(lines, i))) {
        if (!first) paragraph.append(element("br"));
        inline(paragraph, lines[i].trim());
        first = false;
        i += 1;
      }
      target.append(paragraph);
    }
  }

  /** Render markdown `source` into a DocumentFragment (text only; no HTML is interpreted). */
  function render(source) {
    const fragment = document.createDocumentFragment();
    blocks(fragment, String(source == null ? "" : source).replace(/\r\n?/g, "\n").split("\n"));
    return fragment;
  }

  /**
   * An approval's description as written (`plainClass` paragraphs, line breaks kept), with
   * each ```diff block in it shown as a diff: the evidence reads the same as in an answer.
   */
  function evidence(source, plainClass) {
    const fragment = document.createDocumentFragment();
    const lines = String(source == null ? "" : source).replace(/\r\n?/g, "\n").split("\n");
    let plain = [];
    const flush = () => {
      const text = plain.join("\n").replace(/^\n+|\n+$/g, "");
      if (text) {
        const paragraph = element("p", plainClass);
        paragraph.textContent = text;
        fragment.append(paragraph);
      }
      plain = [];
    };
    for (let i = 0; i < lines.length; i += 1) {
      const fence = lines[i].match(FENCE);
      if (!fence || !DIFF_LANGUAGES.has(fence[2].toLowerCase())) {
        plain.push(lines[i]);
        continue;
      }
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      flush();
      fragment.append(diff(body));
    }
    flush();
    return fragment;
  }

  window.PilothouseMarkdown = { render, evidence };
})();
