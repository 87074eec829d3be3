// Markdown rendering: marked's lexer turns text into tokens and this module builds
// DOM nodes from them with createElement/textContent only. Raw HTML is shown as
// text; links keep http(s)/mailto only; images become links.

import { lexer } from '../vendor/marked.esm.js';

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

function safeHref(href) {
  if (!href) return null;
  try {
    const url = new URL(href, 'http://invalid.invalid/');
    if (url.origin === 'http://invalid.invalid') return null; // relative: nowhere to go
    return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function el(tag, children) {
  const node = document.createElement(tag);
  if (children) node.append(...children);
  return node;
}

function text(s) {
  return document.createTextNode(s == null ? '' : String(s));
}

function inline(tokens) {
  const out = [];
  for (const t of tokens || []) out.push(renderInline(t));
  return out;
}

function renderInline(t) {
  switch (t.type) {
    case 'strong':
      return el('strong', inline(t.tokens));
    case 'em':
      return el('em', inline(t.tokens));
    case 'del':
      return el('del', inline(t.tokens));
    case 'codespan': {
      const c = el('code');
      c.textContent = t.text;
      return c;
    }
    case 'br':
      return el('br');
    case 'link': {
      const href = safeHref(t.href);
      if (!href) return el('span', inline(t.tokens));
      const a = el('a', inline(t.tokens));
      a.href = href;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      if (t.title) a.title = t.title;
      return a;
    }
    case 'image': {
      const href = safeHref(t.href);
      const label = `[image: ${t.text || t.href}]`;
      if (!href) return text(label);
      const a = el('a', [text(label)]);
      a.href = href;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      return a;
    }
    case 'text':
      return t.tokens && t.tokens.length ? el('span', inline(t.tokens)) : text(t.text);
    case 'escape':
      return text(t.text);
    case 'html':
      return text(t.raw);
    default:
      return text(t.raw || t.text || '');
  }
}

function block(tokens) {
  const out = [];
  for (const t of tokens || []) {
    const node = renderBlock(t);
    if (node) out.push(node);
  }
  return out;
}

function renderBlock(t) {
  switch (t.type) {
    case 'space':
    case 'def':
      return null;
    case 'heading': {
      const level = Math.min(6, Math.max(1, t.depth || 1));
      // Message headings sit below the page's h1/h2: shift them down two levels.
      const node = el(`h${Math.min(6, level + 2)}`, inline(t.tokens));
      node.className = 'md-heading';
      return node;
    }
    case 'paragraph':
      return el('p', inline(t.tokens));
    case 'text':
      return el('p', t.tokens ? inline(t.tokens) : [text(t.text)]);
    case 'code': {
      const code = el('code');
      code.textContent = t.text;
      if (t.lang) code.dataset.lang = String(t.lang).split(/\s/)[0];
      return el('pre', [code]);
    }
    case 'blockquote':
      return el('blockquote', block(t.tokens));
    case 'hr':
      return el('hr');
    case 'list': {
      const list = el(t.ordered ? 'ol' : 'ul');
      if (t.ordered && t.start !== '' && t.start !== undefined && t.start !== 1) list.start = Number(t.start);
      for (const item of t.items || []) {
        const li = el('li');
        if (item.task) {
          const box = el('input');
          box.type = 'checkbox';
          box.checked = Boolean(item.checked);
          box.disabled = true;
          box.setAttribute('aria-label', item.checked ? 'done' : 'not done');
          li.append(box, text(' '));
        }
        // Tight list items hold `text` tokens: render them inline.
        for (const child of item.tokens || []) {
          if (child.type === 'text' && !t.loose) li.append(...(child.tokens ? inline(child.tokens) : [text(child.text)]));
          else if (child.type === 'checkbox') continue;
          else {
            const node = renderBlock(child);
            if (node) li.append(node);
          }
        }
        list.append(li);
      }
      return list;
    }
    case 'table': {
      const table = el('table');
      const head = el('tr', (t.header || []).map((c) => el('th', inline(c.tokens))));
      table.append(el('thead', [head]));
      const body = el('tbody', (t.rows || []).map((row) => el('tr', row.map((c) => el('td', inline(c.tokens))))));
      table.append(body);
      return el('div', [table]);
    }
    case 'html': {
      const p = el('p');
      p.className = 'md-raw-html';
      p.textContent = t.raw;
      return p;
    }
    default:
      return t.raw ? el('p', [text(t.raw)]) : null;
  }
}

/** Renders markdown text into a DocumentFragment (never through innerHTML). */
export function renderMarkdown(source) {
  const frag = document.createDocumentFragment();
  const src = source == null ? '' : String(source);
  if (!src) return frag;
  let tokens;
  try {
    tokens = lexer(src, { gfm: true, breaks: false });
  } catch {
    const p = el('p');
    p.textContent = src;
    frag.append(p);
    return frag;
  }
  frag.append(...block(tokens));
  return frag;
}
