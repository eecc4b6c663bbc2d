import { type SafeHtml, trustedHtml } from "../http/html.js";
import type { ProductArt } from "../shop/catalogue.js";

// Small drawings instead of photos: the shop loads nothing from the internet.

const STROKE = `stroke="#3d2214" stroke-width="3" stroke-linejoin="round"`;

const bean = (x: number, y: number, angle: number) =>
  `<g transform="translate(${x} ${y}) rotate(${angle})"><ellipse rx="13" ry="19" fill="#6b3e26"/><path d="M0 -17 C -7 -6, 7 6, 0 17" stroke="#2b170c" stroke-width="3" fill="none"/></g>`;

const DRAWINGS: Record<ProductArt, string> = {
  beans: [bean(58, 52, -20), bean(94, 46, 25), bean(76, 82, 70), bean(110, 82, -10)].join(""),
  espresso: `<ellipse cx="80" cy="94" rx="48" ry="8" fill="#d9cbb8"/><path d="M50 46 h60 v20 a30 26 0 0 1 -60 0 z" fill="#fffaf3" ${STROKE}/><path d="M110 54 a11 11 0 0 1 0 22" fill="none" ${STROKE}/><ellipse cx="80" cy="46" rx="30" ry="5" fill="#6b3e26"/><path d="M70 22 q6 8 0 14 M86 18 q6 8 0 14" stroke="#b9a88f" stroke-width="3" fill="none" stroke-linecap="round"/>`,
  ground: `<path d="M52 32 h56 l8 68 h-72 z" fill="#b5835a" ${STROKE}/><path d="M52 32 l6 -12 h44 l6 12" fill="#9c6b45" ${STROKE}/><rect x="62" y="54" width="36" height="26" rx="3" fill="#f4ecdf"/><circle cx="80" cy="67" r="7" fill="#6b3e26"/>`,
  mug: `<rect x="48" y="42" width="54" height="56" rx="7" fill="#2f6f5e" stroke="#1f3d35" stroke-width="3"/><path d="M102 54 h8 a12 12 0 0 1 0 24 h-8" fill="none" stroke="#1f3d35" stroke-width="5"/><path d="M62 20 q6 8 0 16 M76 16 q6 8 0 16 M90 20 q6 8 0 16" stroke="#b9a88f" stroke-width="3" fill="none" stroke-linecap="round"/><path d="M60 70 q15 10 30 0" stroke="#cfe3dc" stroke-width="3" fill="none" stroke-linecap="round"/>`,
  kettle: `<path d="M52 98 h62 l-6 -46 a25 20 0 0 0 -50 0 z" fill="#c9ced4" stroke="#4a5560" stroke-width="3" stroke-linejoin="round"/><path d="M56 86 q-24 -4 -30 -40 l7 -3" fill="none" stroke="#4a5560" stroke-width="5" stroke-linecap="round"/><path d="M108 58 q20 4 14 30" fill="none" stroke="#4a5560" stroke-width="6" stroke-linecap="round"/><rect x="75" y="26" width="16" height="8" rx="3" fill="#4a5560"/>`,
  grinder: `<path d="M60 18 h40 l-7 28 h-26 z" fill="#efe8dc" ${STROKE}/><ellipse cx="80" cy="30" rx="14" ry="4" fill="#6b3e26"/><rect x="54" y="46" width="52" height="52" rx="7" fill="#3b3b3b" stroke="#1e1e1e" stroke-width="3"/><rect x="63" y="70" width="34" height="20" rx="3" fill="#6b3e26"/><circle cx="80" cy="58" r="5" fill="#d9cbb8"/>`,
};

export function productArt(art: ProductArt): SafeHtml {
  return trustedHtml(
    `<svg class="product-art product-art--${art}" viewBox="0 0 160 120" aria-hidden="true" focusable="false">${DRAWINGS[art]}</svg>`,
  );
}

export const LOGO = trustedHtml(
  `<svg class="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false"><circle cx="16" cy="16" r="15" fill="#1f5f4a"/><g transform="rotate(30 16 16)"><ellipse cx="16" cy="16" rx="6.5" ry="9.5" fill="#f4ecdf"/><path d="M16 7 C 12 12, 20 20, 16 25" stroke="#1f5f4a" stroke-width="2" fill="none"/></g></svg>`,
);
