/// <reference lib="dom" />
/**
 * The console's browser script: progressive enhancement only. Every page works without it;
 * with it, the user search updates as you type, upstream health refreshes live, JSON fields
 * say at once when they do not parse, secrets shown once get a copy button, and a form cannot
 * be sent twice. `assets.ts` bundles it for the browser.
 *
 * @module
 */

function enhanceForms(root: ParentNode): void {
  for (const form of root.querySelectorAll<HTMLFormElement>("form[method=post]")) {
    form.addEventListener("submit", (event) => {
      if (event.defaultPrevented) return;
      for (const b of form.querySelectorAll<HTMLButtonElement>("button[type=submit]")) {
        // After the browser has taken the form's data, so the button's own value still goes.
        setTimeout(() => {
          b.disabled = true;
          b.setAttribute("aria-busy", "true");
        }, 0);
      }
    });
  }
}

function enhanceCopy(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    const target = document.getElementById(button.dataset.copy ?? "");
    if (!target || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      await navigator.clipboard.writeText(target.textContent ?? "");
      button.textContent = "Copied";
    });
  }
}

function enhanceJson(): void {
  for (const area of document.querySelectorAll<HTMLTextAreaElement>("textarea[data-json]")) {
    const out = document.getElementById(area.dataset.json ?? "");
    const check = () => {
      if (area.value.trim() === "") return;
      try {
        JSON.parse(area.value);
        area.removeAttribute("aria-invalid");
        if (out) out.textContent = "";
      } catch (e) {
        area.setAttribute("aria-invalid", "true");
        if (out) out.textContent = `This is not valid JSON yet: ${(e as Error).message}`;
      }
    };
    area.addEventListener("input", check);
  }
}

function enhanceSearch(): void {
  const form = document.querySelector<HTMLFormElement>("form[data-search]");
  const results = document.getElementById(form?.dataset.search ?? "");
  const input = form?.querySelector<HTMLInputElement>("input[type=search]");
  if (!form || !results || !input) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let seq = 0;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++seq;
      const url = new URL(form.action, location.href);
      url.search = new URLSearchParams(
        new FormData(form) as unknown as Record<string, string>,
      ).toString();
      const res = await fetch(url, { headers: { accept: "text/html" } }).catch(() => null);
      if (!res?.ok || mine !== seq) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const fresh = doc.getElementById(results.id);
      if (!fresh) return;
      results.replaceChildren(...fresh.childNodes);
      history.replaceState(null, "", url);
      enhanceForms(results);
    }, 250);
  });
}

function enhanceLive(): void {
  for (const box of document.querySelectorAll<HTMLElement>("[data-live]")) {
    const url = box.dataset.live!;
    const every = Number(box.dataset.interval ?? 2000);
    const status = box.querySelector<HTMLElement>("[data-live-status]");
    const tick = async () => {
      const res = await fetch(url, { headers: { accept: "text/html" } }).catch(() => null);
      if (res?.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const fresh = doc.getElementById(box.id);
        const body = box.querySelector("[data-live-body]");
        const next = fresh?.querySelector("[data-live-body]");
        if (body && next) body.replaceChildren(...next.childNodes);
        if (status) status.textContent = `Updated live at ${new Date().toLocaleTimeString()}.`;
      } else if (status) {
        status.textContent = "Live updates paused: the console could not reach the server.";
      }
      setTimeout(tick, every);
    };
    setTimeout(tick, every);
  }
}

enhanceForms(document);
enhanceCopy();
enhanceJson();
enhanceSearch();
enhanceLive();
