// The API reference (/docs/api/): Redoc, from our own static files, in our colours.
"use strict";

// Redoc's sidebar shows its vendor's logo from cdn.redoc.ly: the address is written into
// the bundle and no option turns it off. This page asks no other host for anything (its
// content policy would refuse it, with an error in the console), so the logo is given an
// address that fails at once, without a request, and Redoc then drops the image. React
// sets an image's address both ways, as an attribute and as a property: both are covered.
(() => {
  const VENDOR_CDN = "https://cdn.redoc.ly/";
  const local = (value) => (String(value).startsWith(VENDOR_CDN) ? "data:," : value);
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    const image = this instanceof HTMLImageElement && name.toLowerCase() === "src";
    return setAttribute.call(this, name, image ? local(value) : value);
  };
  const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    ...src,
    set(value) {
      src.set.call(this, local(value));
    },
  });
})();

// Redoc's own theme options, so that its text keeps 4.5:1 against its backgrounds
// (WCAG AA); nothing of our stylesheet reaches into it.
const REDOC_THEME = {
  colors: {
    primary: { main: "#2456d6" },
    success: { main: "#137333" },
    warning: { main: "#8a4b00" },
    error: { main: "#c5221f" },
    text: { primary: "#1d2330", secondary: "#4b5262" },
    http: {
      get: "#137333",
      post: "#1d4fb8",
      put: "#7b3f72",
      options: "#6b5200",
      patch: "#9a3f0c",
      delete: "#b3261e",
      basic: "#4b5262",
      link: "#006570",
      head: "#7e2f8a",
    },
  },
  sidebar: { textColor: "#1d2330", activeTextColor: "#1d4fb8" },
  rightPanel: { backgroundColor: "#1d2330", textColor: "#f3f5f8" },
  typography: {
    links: { color: "#2456d6", visited: "#2456d6", hover: "#173c99" },
    // Inline code in descriptions: Redoc's red is 3.8:1 on its tinted background.
    code: { color: "#b3261e", backgroundColor: "rgba(38, 50, 56, 0.05)" },
  },
};

// A table in a description scrolls sideways on a narrow screen (Redoc makes it its own
// scrolling box): keyboard users reach it like our own scrolling boxes. It stays a table.
function focusableTables(element) {
  for (const table of element.querySelectorAll(".redoc-markdown table")) {
    table.setAttribute("tabindex", "0");
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const element = document.getElementById("redoc");
  Redoc.init(
    element.dataset.specUrl,
    { theme: REDOC_THEME, scrollYOffset: ".site-header" },
    element,
    () => focusableTables(element),
  );
});
