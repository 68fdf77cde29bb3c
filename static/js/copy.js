// Copy buttons, on every page:
// - every code sample (<pre class="example">) gets a "Copy" button that copies its text;
// - <button data-copy-target="ID"> copies the value of the field #ID (a new API key);
// - <button data-copy="TEXT"> copies TEXT (a test number), the element before it selected
//   if the clipboard refuses.
"use strict";

// The clipboard API needs a secure context (https or localhost); elsewhere the selection
// is copied the old way, and left selected so that Ctrl+C works if that is refused too.
async function copyText(text, select) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  select();
  if (!document.execCommand("copy")) {
    throw new Error("copy refused");
  }
}

function selectContents(element) {
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}

function addSampleButtons() {
  for (const pre of document.querySelectorAll("pre.example")) {
    if (pre.parentElement.classList.contains("code-sample")) {
      continue;
    }
    const sample = document.createElement("div");
    sample.className = "code-sample";
    pre.replaceWith(sample);
    sample.append(pre);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = "Copy";
    sample.prepend(button);
  }
}

// Copies `text` and says so on the button for two seconds; when the clipboard refuses,
// selects `shown` so that the reader's own Ctrl+C copies it.
async function copyFromButton(button, text, shown) {
  try {
    await copyText(text, () => selectContents(shown));
    button.textContent = "Copied";
  } catch (error) {
    selectContents(shown);
    button.textContent = "Press Ctrl+C";
  }
  clearTimeout(button.resetTimer);
  button.resetTimer = setTimeout(() => {
    button.textContent = "Copy";
  }, 2000);
}

async function copySample(button) {
  const pre = button.parentElement.querySelector("pre.example");
  await copyFromButton(button, pre.innerText.replace(/\n$/, ""), pre);
}

async function copyField(button) {
  const field = document.getElementById(button.dataset.copyTarget);
  const status = button.parentElement.querySelector(".copy-status");
  try {
    await copyText(field.value, () => field.select());
    button.textContent = "Copied";
    if (status) {
      status.textContent = "Copied to the clipboard.";
    }
  } catch (error) {
    field.select();
    if (status) {
      status.textContent = "Copying failed: the key is selected, press Ctrl+C (⌘C).";
    }
  }
}

async function copyAttribute(button) {
  await copyFromButton(button, button.dataset.copy, button.previousElementSibling || button);
}

document.addEventListener("click", (event) => {
  const sampleButton = event.target.closest("button.copy-button");
  if (sampleButton) {
    copySample(sampleButton);
    return;
  }
  const fieldButton = event.target.closest("button[data-copy-target]");
  if (fieldButton) {
    copyField(fieldButton);
    return;
  }
  const textButton = event.target.closest("button[data-copy]");
  if (textButton) {
    copyAttribute(textButton);
  }
});

// A click in the key field selects all of it, so a manual copy never misses a character.
document.addEventListener("focusin", (event) => {
  if (event.target.matches("input[readonly][id='raw-key']")) {
    event.target.select();
  }
});

addSampleButtons();
