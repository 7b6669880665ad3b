// The Pilothouse chat client: streams answers over SSE (fetch), shows tool calls (a sub-agent's
// nested under the supervisor's ask_<agent> call), context actions and plans as they happen,
// says what is running and for how long, asks for approvals (showing the real call, a
// sub-agent's included), and lists conversations to resume.
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
  const PLAN_TOOL = "propose_plan";
  const status = window.PilothouseStatus; // status.js: what runs, and for how long

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
    status.clear();
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

  // A sub-agent's calls go in a list under the supervisor's ask_<agent> call they serve.
  function subcallList(parentId) {
    const parent = state.tools.get(parentId);
    if (!parent) return null;
    let list = parent.nextElementSibling;
    if (!list || !list.classList.contains("subcalls") || list.dataset.parentId !== parentId) {
      list = element("div", "subcalls");
      list.dataset.parentId = parentId;
      parent.after(list);
    }
    return list;
  }

  // A sub-agent's answer as it is written, under the ask_<agent> call it answers; it gives
  // way to the supervisor's answer, which carries it.
  function addDraft(parentId, agent, text) {
    let draft = messages.querySelector(`.subagent-draft[data-parent-id="${CSS.escape(parentId)}"]`);
    if (!draft) {
      const list = subcallList(parentId);
      if (!list) return;
      draft = element("div", "subagent-draft");
      draft.dataset.parentId = parentId;
      draft.append(element("span", "tool-agent", agent || "agent"), element("span", "draft-text"));
      list.append(draft);
    }
    const body = draft.querySelector(".draft-text");
    body.textContent += text;
    scrollDown();
  }

  function dropDrafts(parentId) {
    for (const draft of messages.querySelectorAll(".subagent-draft")) {
      if (!parentId || draft.dataset.parentId === parentId) draft.remove();
    }
  }

  function addToolCall(call) {
    const details = element("details", call.agent ? "tool sub running" : "tool running");
    details.dataset.callId = call.id;
    const summary = element("summary");
    summary.append(element("span", "tool-icon", "⚙"));
    if (call.agent) {
      details.dataset.agent = call.agent;
      summary.append(element("span", "tool-agent", call.agent));
    }
    summary.append(element("span", "tool-name", call.name),
      element("span", "tool-args-inline", shortArgs(call.args)),
      element("span", "tool-status", "running…"));
    const body = element("div", "tool-body");
    body.append(element("h4", "", "Arguments"),
      element("pre", "tool-args", JSON.stringify(call.args || {}, null, 2)));
    details.append(summary, body);
    const list = call.parentId ? subcallList(call.parentId) : null;
    (list || messages).append(details);
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

  // The calls an approval is about: a sub-agent's own pending calls when the supervisor
  // relays them (`subagent_calls`), else the gated call itself. Read as in approval_view.py.
  function approvalActions(value) {
    const objects = (list) => (Array.isArray(list) ? list : [])
      .filter((c) => c && typeof c === "object");
    const calls = objects(value.subagent_calls);
    if (calls.length) return calls;
    const batch = objects(value.action_requests); // LangChain's batched gate
    return batch.length ? batch : [value];
  }

  function appendAction(card, action) {
    const name = action.name || "action";
    const args = action.args || {};
    // The description's diff (the evidence of what would change) shows as in an answer.
    if (action.description) {
      card.append(window.PilothouseMarkdown.evidence(action.description, "description"));
    }
    if (name === PLAN_TOOL) {
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
  }

  function markWaiting(callId) {
    const gated = state.tools.get(callId);
    if (!gated) return;
    gated.classList.remove("running");
    gated.classList.add("waiting");
    gated.querySelector(".tool-status").textContent = "awaiting approval";
  }

  function addApproval(id, value) {
    const actions = approvalActions(value);
    markWaiting(value.tool_call_id);
    for (const action of actions) markWaiting(action.tool_call_id);
    const card = element("section", "approval");
    card.dataset.interruptId = id;
    const names = actions.map((action) => action.name || "action");
    card.append(element("h3", "", names.length === 1 ? `Approval needed: ${names[0]}` :
      `Approval needed: ${names.length} actions`));
    if (value.agent) {
      card.append(element("p", "asked-by",
        `Asked by the ${value.agent} agent (through ${value.name})`));
    }
    for (const action of actions) {
      if (actions.length > 1) card.append(element("h4", "action-name", action.name || "action"));
      appendAction(card, action);
    }
    const buttons = element("div", "actions");
    const reason = element("input", "reason");
    reason.placeholder = "Reason or requested change (for Reject)";
    reason.setAttribute("aria-label", "Reason for rejecting");
    const approve = element("button", "approve primary", "Approve");
    const reject = element("button", "reject", "Reject");
    approve.type = "button";
    reject.type = "button";
    buttons.append(reason, approve, reject);
    const outcome = element("p", "outcome");
    card.append(buttons, outcome);
    const answer = (decision) => {
      approve.disabled = true;
      reject.disabled = true;
      reason.disabled = true;
      const message = reason.value.trim();
      outcome.textContent = decision === "approve" ? "✔ Approved" :
        `✘ Rejected${message ? `: ${message}` : ""}`;
      card.classList.add(decision === "approve" ? "approved" : "rejected");
      card.classList.remove("pending");
      decide(id, decision, message);
    };
    approve.addEventListener("click", () => answer("approve"));
    reject.addEventListener("click", () => answer("reject"));
    card.classList.add("pending");
    messages.append(card);
    // A change to a system opens on Reject: a stray Enter must not sync a cluster.
    const changes = names.some((name) => name !== PLAN_TOOL);
    (changes ? reject : approve).focus({ preventScroll: true });
    status.waiting(names);
    scrollDown();
  }

  function showEvent(event) {
    const data = event.data || {};
    status.follow(event);
    switch (event.kind) {
      case "token":
        if (data.parent_id) {
          addDraft(data.parent_id, data.agent, event.text);
          break;
        }
        if (!state.bubble) {
          state.bubble = addBubble("assistant", "");
          state.bubble.classList.add("streaming");
        }
        state.raw += event.text;
        state.bubble.querySelector(".body").textContent = state.raw;
        scrollDown();
        break;
      case "answer":
        dropDrafts();
        if (state.bubble) finishStreaming(event.text || state.raw);
        else if (event.text) addBubble("assistant", event.text);
        break;
      case "tool_call":
        finishStreaming(state.raw);
        addToolCall({ id: data.id, name: data.name || event.text, args: data.args,
          parentId: data.parent_id, agent: data.agent });
        break;
      case "tool_result":
        if (!data.parent_id) dropDrafts(data.id); // an ask_<agent> call returned
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
        dropDrafts();
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
    if (busy) status.start();
    else status.stop();
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

  // Streams one turn; the error it showed, if any, is returned for the caller to act on.
  async function run(path, body) {
    setBusy(true);
    try {
      const response = await call(path, { method: "POST", body });
      await readEvents(response, showEvent);
      finishStreaming(state.raw);
      return null;
    } catch (error) {
      finishStreaming(state.raw);
      addError(error.message, error.suggestion);
      return error;
    } finally {
      setBusy(false);
      refreshList();
    }
  }

  // The server gives every conversation its id (asking never creates one): POST first.
  async function startConversation(title) {
    try {
      const created = await (await call("/conversations", { method: "POST", body: { title } })).json();
      setCurrent(created.id, created.title);
      return true;
    } catch (error) {
      addError(error.message, error.suggestion);
      return false;
    }
  }

  async function ask(text) {
    if (state.busy) return;
    if (!state.id && !(await startConversation(text))) return;
    addBubble("user", text);
    const error = await run(conversationPath(state.id, "/ask"), { question: text });
    if (error && error.status === 404) {
      // Deleted meanwhile, or another key's: the next question starts a new conversation.
      setCurrent(null, "New conversation");
      history.replaceState(null, "", location.pathname);
      addError("This conversation is gone; ask again to start a new one.");
    }
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
