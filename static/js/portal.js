// Copy buttons of the developer portal: <button data-copy-target="ID"> copies the value of #ID.
"use strict";

async function copyValue(field) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(field.value);
    return;
  }
  field.select();
  if (!document.execCommand("copy")) {
    throw new Error("copy refused");
  }
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy-target]");
  if (!button) {
    return;
  }
  const field = document.getElementById(button.dataset.copyTarget);
  const status = button.parentElement.querySelector(".copy-status");
  try {
    await copyValue(field);
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
});

// A click in the key field selects all of it, so a manual copy never misses a character.
document.addEventListener("focusin", (event) => {
  if (event.target.matches("input[readonly][id='raw-key']")) {
    event.target.select();
  }
});
