// The Pilothouse chat client: streams answers over SSE (fetch), shows tool calls, context
// actions and plans as they happen, asks for approvals, and lists conversations to resume.
//
// All text from the server is set with textContent (or the markdown renderer, which does the
// same), never innerHTML, so nothing an agent or a tool says can inject markup.
"use strict";

(function () {
  const KEY_STORAGE = "pilothouse.apiKey";
  const $ = (selector) => document.querySelector(selector);
  const messages = $("#messages");
  const form = $("#ask-form");
  const question = $("#question");
  const state = {
    id: null,
    busy: false,
    key: localStorage.getItem(KEY_STORAGE) || "",
    bubble: null, // the assistant bubble receiving tokens
    raw: "",
    tools: new Map(), // tool call id -> its <details>
  };

  class ApiError extends Error {
    constructor(status, body) {
      super(body.error || `The server answered ${status}.`);
      this.status = status;
      this.suggestion = body.suggestion || "";
    }
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- talking to the API -------------------------------------------------------------

  async function call(path, options = {}) {
    const headers = {};
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (state.key) headers.Authorization = `Bearer ${state.key}`;
    const response = await fetch(path, {
      method: options.method || "GET",
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    if (!response.ok) {
      let body;
      try {
        body = await response.json();
      } catch (_) {
        body = { error: `The server answered ${response.status}.` };
      }
      if (response.status === 401) $("#key-form").hidden = false;
      throw new ApiError(response.status, body);
    }
    return response;
  }

  const conversationPath = (id, tail = "") => `/conversations/${encodeURIComponent(id)}${tail}`;

  // Server-sent events over a fetch body: frames end with a blank line, data is JSON.
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split("\n").filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart()).join("\n");
        if (data) onEvent(JSON.parse(data));
        end = buffer.indexOf("\n\n");
      }
    }
  }

  // ---- rendering ----------------------------------------------------------------------

  function scrollDown() {
    messages.scrollTop = messages.scrollHeight;
  }

  function clearMessages() {
    messages.replaceChildren();
    state.bubble = null;
    state.raw = "";
    state.tools = new Map();
  }

  function addBubble(role, text) {
    const hint = $("#empty-hint");
    if (hint) hint.remove();
    const bubble = element("article", `message ${role}`);
    bubble.append(element("div", "role", role === "user" ? "You" : "Pilothouse"));
    const body = element("div", "body");
    if (role === "user") body.textContent = text;
    else body.append(window.PilothouseMarkdown.render(text));
    bubble.append(body);
    messages.append(bubble);
    scrollDown();
    return bubble;
  }

  function finishStreaming(text) {
    if (!state.bubble) return;
    const body = state.bubble.querySelector(".body");
    body.replaceChildren(window.PilothouseMarkdown.render(text));
    state.bubble.classList.remove("streaming");
    state.bubble = null;
    state.raw = "";
  }

  function shortArgs(args) {
    const text = Object.entries(args || {})
      .map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(", ");
    return text.length > 90 ? `${text.slice(0, 87)}…` : text;
  }

  function addToolCall(call) {
    const details = element("details", "tool running");
    details.dataset.callId = call.id;
    const summary = element("summary");
    summary.append(element("span", "tool-icon", "⚙"), element("span", "tool-name", call.name),
      element("span", "tool-args-inline", shortArgs(call.args)),
      element("span", "tool-status", "running…"));
    const body = element("div", "tool-body");
    body.append(element("h4", "", "Arguments"),
      element("pre", "tool-args", JSON.stringify(call.args || {}, null, 2)));
    details.append(summary, body);
    messages.append(details);
    state.tools.set(call.id, details);
    scrollDown();
  }

  function attachResult(id, result) {
    const details = state.tools.get(id);
    if (!details) return;
    const failed = result.status === "error";
    details.classList.remove("running", "waiting");
    details.classList.add(failed ? "failed" : "done");
    const chars = Number(result.chars || (result.text || "").length).toLocaleString();
    details.querySelector(".tool-status").textContent = failed ? `error · ${chars} chars` :
      `${chars} chars`;
    const body = details.querySelector(".tool-body");
    body.append(element("h4", "", "Result"), element("pre", "tool-result", result.text || ""));
  }

  function addNote(kind, text) {
    messages.append(element("div", `note ${kind}`, text));
    scrollDown();
  }

  function addSummary(text) {
    const details = element("details", "note summary");
    details.append(element("summary", "", "⚙ Earlier messages were summarized"),
      element("div", "summary-text", text));
    messages.append(details);
  }

  function addError(message, suggestion) {
    const box = element("div", "error");
    box.append(element("strong", "", message));
    if (suggestion) box.append(element("p", "suggestion", `What to do: ${suggestion}`));
    messages.append(box);
    scrollDown();
  }

  function planNote(data) {
    const plan = data.plan || {};
    if (data.action === "approved") {
      return `📋 Plan approved: ${plan.goal || ""} (${(plan.steps || []).length} steps)`;
    }
    const step = (plan.steps || [])[Number(data.step) - 1] || {};
    const note = data.note ? ` — ${data.note}` : "";
    return `📋 Step ${data.step} ${data.status}: ${step.title || ""}${note}`;
  }

  function addApproval(id, value) {
    const gated = state.tools.get(value.tool_call_id);
    if (gated) {
      gated.classList.replace("running", "waiting");
      gated.querySelector(".tool-status").textContent = "awaiting approval";
    }
    const card = element("section", "approval");
    card.dataset.interruptId = id;
    const name = value.name || "action";
    card.append(element("h3", "", `Approval needed: ${name}`));
    if (value.description) card.append(element("p", "description", value.description));
    const args = value.args || {};
    if (name === "propose_plan") {
      card.append(element("p", "goal", args.goal || ""));
      const steps = element("ol", "plan-steps");
      for (const step of args.steps || []) {
        const tools = (step.tools || []).length ? ` (${step.tools.join(", ")})` : "";
        steps.append(element("li", "", `${step.title}${tools}`));
      }
      card.append(steps);
    } else {
      const shown = typeof args.command === "string" ? args.command : JSON.stringify(args, null, 2);
      card.append(element("pre", "command", shown));
    }
    const actions = element("div", "actions");
    const reason = element("input", "reason");
    reason.placeholder = "Reason or requested change (for Reject)";
    reason.setAttribute("aria-label", "Reason for rejecting");
    const approve = element("button", "approve primary", "Approve");
    const reject = element("button", "reject", "Reject");
    approve.type = "button";
    reject.type = "button";
    actions.append(reason, approve, reject);
    const outcome = element("p", "outcome");
    card.append(actions, outcome);
    const answer = (decision) => {
      approve.disabled = true;
      reject.disabled = true;
      reason.disabled = true;
      const message = reason.value.trim();
      outcome.textContent = decision === "approve" ? "✔ Approved" :
        `✘ Rejected${message ? `: ${message}` : ""}`;
      card.classList.add(decision === "approve" ? "approved" : "rejected");
      decide(id, decision, message);
    };
    approve.addEventListener("click", () => answer("approve"));
    reject.addEventListener("click", () => answer("reject"));
    messages.append(card);
    scrollDown();
  }

  function showEvent(event) {
    const data = event.data || {};
    switch (event.kind) {
      case "token":
        if (!state.bubble) {
          state.bubble = addBubble("assistant", "");
          state.bubble.classList.add("streaming");
        }
        state.raw += event.text;
        state.bubble.querySelector(".body").textContent = state.raw;
        scrollDown();
        break;
      case "answer":
        if (state.bubble) finishStreaming(event.text || state.raw);
        else if (event.text) addBubble("assistant", event.text);
        break;
      case "tool_call":
        finishStreaming(state.raw);
        addToolCall({ id: data.id, name: data.name || event.text, args: data.args });
        break;
      case "tool_result":
        attachResult(data.id, { text: event.text, status: data.status, chars: data.chars });
        break;
      case "context":
        addNote("context", `⚙ context: ${event.text}`);
        break;
      case "plan":
        addNote("plan", planNote(data));
        break;
      case "interrupt":
        finishStreaming(state.raw);
        addApproval(data.id, data.value || {});
        break;
      case "error":
        finishStreaming(state.raw);
        addError(event.text, data.suggestion);
        break;
      default:
        break;
    }
  }

  // ---- conversations ------------------------------------------------------------------

  function setBusy(busy) {
    state.busy = busy;
    $("#send").disabled = busy;
    $("#status").textContent = busy ? "answering…" : "";
    document.body.classList.toggle("busy", busy);
  }

  function setCurrent(id, title) {
    state.id = id;
    $("#conversation-title").textContent = title || (id ? id : "New conversation");
    for (const item of document.querySelectorAll("#conversations li")) {
      item.classList.toggle("current", item.dataset.id === id);
    }
    if (id && location.hash !== `#${id}`) history.replaceState(null, "", `#${id}`);
  }

  async function refreshList() {
    let page;
    try {
      page = await (await call("/conversations?limit=100")).json();
    } catch (error) {
      if (error.status !== 401) console.warn(error);
      return;
    }
    const list = $("#conversations");
    list.replaceChildren();
    for (const conversation of page.conversations) {
      const item = element("li");
      item.dataset.id = conversation.id;
      item.classList.toggle("current", conversation.id === state.id);
      const open = element("button", "open");
      open.type = "button";
      open.append(element("span", "title", conversation.title || conversation.id),
        element("span", "when", new Date(conversation.updated_at).toLocaleString()));
      open.addEventListener("click", () => openConversation(conversation.id));
      item.append(open);
      list.append(item);
    }
  }

  async function openConversation(id) {
    if (state.busy) return;
    let conversation;
    try {
      conversation = await (await call(conversationPath(id))).json();
    } catch (error) {
      addError(error.message, error.suggestion);
      return;
    }
    clearMessages();
    setCurrent(conversation.id, conversation.title);
    for (const message of conversation.messages) {
      if (message.role === "user") addBubble("user", message.text);
      else if (message.role === "summary") addSummary(message.text);
      else if (message.role === "tool") attachResult(message.tool_call_id, message);
      else if (message.role === "assistant") {
        if (message.text) addBubble("assistant", message.text);
        for (const toolCall of message.tool_calls || []) addToolCall(toolCall);
      }
    }
    for (const approval of conversation.pending) addApproval(approval.id, approval.value);
  }

  async function run(path, body) {
    setBusy(true);
    try {
      const response = await call(path, { method: "POST", body });
      await readEvents(response, showEvent);
      finishStreaming(state.raw);
    } catch (error) {
      finishStreaming(state.raw);
      addError(error.message, error.suggestion);
    } finally {
      setBusy(false);
      refreshList();
    }
  }

  async function ask(text) {
    if (state.busy) return;
    if (!state.id) {
      try {
        const created = await (await call("/conversations", { method: "POST", body: { title: text } })).json();
        setCurrent(created.id, created.title);
      } catch (error) {
        addError(error.message, error.suggestion);
        return;
      }
    }
    addBubble("user", text);
    await run(conversationPath(state.id, "/ask"), { question: text });
  }

  async function decide(interruptId, decision, message) {
    const body = { decision, interrupt_id: interruptId };
    if (message) body.message = message;
    await run(conversationPath(state.id, "/approvals"), body);
  }

  // ---- wiring -------------------------------------------------------------------------

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text || state.busy) return;
    question.value = "";
    ask(text);
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  $("#new-conversation").addEventListener("click", () => {
    if (state.busy) return;
    clearMessages();
    setCurrent(null, "New conversation");
    history.replaceState(null, "", location.pathname);
    question.focus();
  });
  $("#key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.key = $("#api-key").value.trim();
    localStorage.setItem(KEY_STORAGE, state.key);
    $("#key-form").hidden = true;
    refreshList();
    if (location.hash.length > 1) openConversation(decodeURIComponent(location.hash.slice(1)));
  });

  if (document.body.dataset.auth === "key" && !state.key) $("#key-form").hidden = false;
  refreshList();
  if (location.hash.length > 1) openConversation(decodeURIComponent(location.hash.slice(1)));
  question.focus();
})();
