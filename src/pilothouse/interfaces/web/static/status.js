// The status line of the chat page: what the agent is doing now and how long the turn has
// taken ("thinking · 12s", "argocd agent: running list_applications · 3s", "writing the
// answer · 20s", "waiting for approval: run_command", "answered in 41s"). A local model can
// take minutes per answer; a clock that keeps moving says the work goes on.
"use strict";

(function () {
  let work = null; // the running turn: {started, phase, waiting, open: Map(call id -> label), timer}
  const line = () => document.querySelector("#status");

  function elapsed(ms) {
    const seconds = Math.floor(ms / 1000);
    return seconds < 60 ? `${seconds}s` :
      `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
  }

  function show(text, className) {
    line().textContent = text;
    line().className = className;
  }

  function paint() {
    if (work) show(`${work.phase} · ${elapsed(Date.now() - work.started)}`,
      work.waiting ? "waiting" : "working");
  }

  function setPhase(phase, waiting = false) {
    if (!work) return;
    work.phase = phase;
    work.waiting = waiting;
    paint();
  }

  window.PilothouseStatus = {
    start() {
      if (work) clearInterval(work.timer);
      work = { started: Date.now(), phase: "thinking", waiting: false, open: new Map() };
      work.timer = setInterval(paint, 500);
      paint();
    },

    // Waiting for a person is a state of its own, not "running".
    waiting(names) {
      const phase = `waiting for approval: ${names.join(", ")}`;
      if (work) setPhase(phase, true);
      else show(phase, "waiting"); // an approval still pending when a conversation is opened
    },

    stop() {
      if (!work) return;
      clearInterval(work.timer);
      const ended = work;
      work = null;
      if (ended.waiting) show(ended.phase, "waiting");
      else show(`answered in ${elapsed(Date.now() - ended.started)}`, "");
    },

    clear() {
      if (work) clearInterval(work.timer);
      work = null;
      show("", "");
    },

    // Move the phase along with the turn's events (the SSE `{kind, text, data}` frames).
    follow(event) {
      const data = event.data || {};
      if (!work) return;
      if (event.kind === "token" && data.agent) setPhase(`${data.agent} agent: writing its answer`);
      else if (event.kind === "token" && !work.open.size) setPhase("writing the answer");
      else if (event.kind === "tool_call") {
        const name = data.name || event.text;
        // While an ask_<agent> call runs, its agent's model works between its own calls.
        const label = data.agent ? `${data.agent} agent: running ${name}` :
          name.startsWith("ask_") ? `${name.slice(4)} agent working` : `running ${name}`;
        work.open.set(data.id || name, label);
        setPhase(label);
      } else if (event.kind === "tool_result") {
        work.open.delete(data.id);
        setPhase(work.open.size ? [...work.open.values()].pop() : "thinking");
      } else if (event.kind === "waiting") {
        // The local model serves one turn at a time: "waiting for the model (1 ahead)".
        setPhase(data.ahead ? event.text : "thinking");
      }
    },
  };
})();
