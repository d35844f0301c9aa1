// SPDX-License-Identifier: MIT
// schema.js - forms from GET /api/v1/schema/{subsystem} (docs/schemas.md,
// "Description for clients"): one input per attribute by its kind, and the
// same checks the server makes, so a mistake is named before anything is
// sent. The server stays the judge: what it refuses is shown with its
// `detail`. A subsystem written in C has no description: GET /api/v1 lists
// the described ones, and only those are asked for; the others' attributes
// get plain text inputs and no client-side checks.

import { api, ApiError } from './api.js';
import { h, uid } from './dom.js';

const cache = new Map(); // subsystem -> Promise<description|null>
let described = null; // Set of described subsystems, from GET /api/v1

/** Which subsystems have a description (GET /api/v1 "described"). */
export function setDescribed(names) {
  described = Array.isArray(names) ? new Set(names) : null;
}

/** The description of @subsystem, or null when it has none. */
export function schemaOf(subsystem) {
  if (described && !described.has(subsystem)) return Promise.resolve(null);
  if (!cache.has(subsystem)) {
    const p = api.schema(subsystem).then(
      (r) => r.data,
      (e) => {
        if (e instanceof ApiError && e.status === 404) return null;
        cache.delete(subsystem); // try again next time
        throw e;
      },
    );
    cache.set(subsystem, p);
  }
  return cache.get(subsystem);
}

export function clearSchemaCache() {
  cache.clear();
  described = null;
}

/** The JSON Schema properties of type @type in @desc, or null. */
export function propsOf(desc, type) {
  const t = desc && type && desc.types[type];
  return t ? t.attributes.properties || {} : null;
}

/** The type a mkdir in @node makes, from the description; null if unknown. */
export function childTypeOf(desc, node, parentNode) {
  if (!desc) return null;
  const t = desc.types[node.type];
  if (t && t.creates) return t.creates.type;
  // pending/ of a committable group makes the committable type
  if (node.name === 'pending' && node.default_group && parentNode) {
    const pt = desc.types[parentNode.type];
    if (pt && pt.committable) return pt.committable.type;
  }
  return null;
}

const INT_RE = /^[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)$/;
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const LABEL_RE = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const BOOL_WORDS = ['0', '1', 'true', 'false', 'yes', 'no', 'on', 'off'];

function parseInt64(s) {
  const neg = s.startsWith('-');
  const body = s.replace(/^[+-]/, '');
  const n = /^0[xX]/.test(body) ? BigInt(body) : BigInt(body.replace(/^0+(?=\d)/, ''));
  return neg ? -n : n;
}

function ipv4Ok(v) {
  const parts = v.split('.');
  return (
    parts.length === 4 &&
    parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255)
  );
}

function ipv6Ok(v) {
  if (!/^[0-9A-Fa-f:.]+$/.test(v) || !v.includes(':')) return false;
  try {
    return new URL(`http://[${v}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}

function hostnameOk(v) {
  return v.length <= 253 && v.split('.').every((l) => LABEL_RE.test(l));
}

/** The hint shown beside an input: what the attribute accepts. */
export function ruleText(prop) {
  if (!prop) return '';
  const kind = prop['x-kind'];
  const bits = [];
  switch (kind) {
    case 'int':
    case 'uint': {
      bits.push(kind === 'uint' ? 'unsigned integer' : 'integer');
      const lo = prop.minimum;
      const hi = prop.maximum;
      if (lo !== undefined && hi !== undefined) bits.push(`${lo}–${hi}`);
      else if (lo !== undefined && !(kind === 'uint' && lo === 0)) bits.push(`at least ${lo}`);
      else if (hi !== undefined) bits.push(`at most ${hi}`);
      break;
    }
    case 'bool':
      bits.push('boolean');
      break;
    case 'enum':
      bits.push(`one of ${prop.enum.join(', ')}`);
      break;
    case 'string':
      bits.push('text');
      if (prop.pattern) bits.push(`must match ${prop.pattern}`);
      if (prop['x-max-bytes'] !== undefined) bits.push(`at most ${prop['x-max-bytes']} bytes`);
      break;
    case 'ipv4':
      bits.push('IPv4 address');
      break;
    case 'ipv6':
      bits.push('IPv6 address');
      break;
    case 'mac':
      bits.push('MAC address (00:11:22:aa:bb:cc)');
      break;
    case 'uuid':
      bits.push('UUID');
      break;
    case 'hostname':
      bits.push('host name');
      break;
    default:
      break;
  }
  if (prop['x-display'] === 'hex') bits.push('shown in hexadecimal');
  if (prop.default !== undefined) bits.push(`default ${displayValue(prop, defaultText(prop))}`);
  return bits.join('; ');
}

/** @value as the form shows it: an integer the schema shows in hex
 * (`x-display: hex`, USB's idVendor) as 0x1d6b; anything else as it is. */
export function displayValue(prop, value) {
  if (!prop || prop['x-display'] !== 'hex' || typeof value !== 'string') return value;
  if (!/^[0-9]+$/.test(value)) return value;
  const width = prop.maximum !== undefined ? BigInt(prop.maximum).toString(16).length : 0;
  return `0x${BigInt(value).toString(16).padStart(width, '0')}`;
}

function defaultText(prop) {
  if (prop.default === true) return '1';
  if (prop.default === false) return '0';
  return String(prop.default);
}

/**
 * Check @value against @prop as the server would (docs/schemas.md, Kinds).
 * @return null when it passes, else the rule it breaks, in the server's words.
 */
export function validate(name, prop, value) {
  if (!prop) return null;
  const kind = prop['x-kind'];
  if (value === '' && prop.default === undefined) return null; // unset
  switch (kind) {
    case 'int':
    case 'uint': {
      if (!INT_RE.test(value) || (kind === 'uint' && value.startsWith('-'))) {
        return `${name}: must be ${kind === 'uint' ? 'an unsigned' : 'an'} integer (decimal, or hexadecimal after 0x)`;
      }
      const n = parseInt64(value);
      if (prop.minimum !== undefined && n < BigInt(prop.minimum)) return `${name}: at least ${prop.minimum}`;
      if (prop.maximum !== undefined && n > BigInt(prop.maximum)) return `${name}: at most ${prop.maximum}`;
      const lo = kind === 'uint' ? 0n : -(2n ** 63n);
      const hi = kind === 'uint' ? 2n ** 64n - 1n : 2n ** 63n - 1n;
      if (n < lo || n > hi) return `${name}: must fit in ${kind === 'uint' ? 'an unsigned' : 'a signed'} 64-bit integer`;
      return null;
    }
    case 'bool':
      return BOOL_WORDS.includes(value.toLowerCase()) ? null : `${name}: must be one of ${BOOL_WORDS.join(', ')}`;
    case 'enum':
      return prop.enum.includes(value) ? null : `${name}: must be one of: ${prop.enum.join(', ')}`;
    case 'ipv4':
      return ipv4Ok(value) ? null : `${name}: must be an IPv4 address`;
    case 'ipv6':
      return ipv6Ok(value) ? null : `${name}: must be an IPv6 address`;
    case 'mac':
    case 'uuid':
    case 'hostname': {
      const ok = kind === 'uuid' ? UUID_RE.test(value) : kind === 'hostname' ? hostnameOk(value) : new RegExp(prop.pattern).test(value);
      return ok ? null : `${name}: must be a ${kind === 'mac' ? 'MAC address' : kind === 'uuid' ? 'UUID' : 'host name'}`;
    }
    case 'string': {
      const max = prop['x-max-bytes'];
      if (max !== undefined && new TextEncoder().encode(value).length > max) return `${name}: at most ${max} bytes`;
      if (prop.pattern) {
        let re = null;
        try {
          re = new RegExp(prop.pattern, 's'); // POSIX ERE: searched, '.' matches newlines
        } catch {
          re = null; // a dialect difference: the server decides
        }
        if (re && !re.test(value)) return `${name}: must match ${prop.pattern}`;
      }
      return null;
    }
    default:
      return null;
  }
}

/**
 * An input for attribute @name with JSON Schema @prop (or null: plain text)
 * holding @value. Returns {control, read()}: control is the element to
 * label (its id is set), read() the string to store.
 */
export function makeControl(name, prop, value, opts = {}) {
  const id = opts.id || uid('attr');
  const kind = prop ? prop['x-kind'] : null;
  const common = { id, name, 'aria-describedby': opts.describedBy };
  if (kind === 'enum' || kind === 'bool') {
    const choices =
      kind === 'enum'
        ? prop.enum.map((v) => [v, v])
        : [
            ['1', '1 (true)'],
            ['0', '0 (false)'],
          ];
    const select = h('select', common);
    const known = choices.some(([v]) => v === value);
    if (prop.default === undefined || (!known && value !== '')) {
      select.append(h('option', { value: value !== '' && !known ? value : '' }, value !== '' && !known ? value : '(unset)'));
    }
    for (const [v, label] of choices) select.append(h('option', { value: v }, label));
    select.value = value;
    if (select.value !== value && kind === 'bool') select.value = ['1', 'true', 'yes', 'on'].includes(value.toLowerCase()) ? '1' : '0';
    return { control: select, read: () => select.value };
  }
  const attrs = { ...common, type: 'text', value, autocomplete: 'off', spellcheck: 'false' };
  if (kind === 'int' || kind === 'uint') attrs.inputmode = 'numeric';
  if (opts.placeholder) attrs.placeholder = opts.placeholder;
  else if (prop && prop.default !== undefined) attrs.placeholder = displayValue(prop, defaultText(prop));
  const input = h('input', attrs);
  return { control: input, read: () => input.value };
}

/** @template ("{attr}", "{@links}") filled from the node @n (with its
 * attributes and links), values shown as the forms show them; '–' for
 * an empty one. */
export function summaryOf(template, n, props) {
  return template.replace(/\{([^{}]+)\}/g, (_, key) => {
    if (key === '@links') return (n.links || []).map((l) => l.target).join(', ') || '–';
    const a = (n.attributes || []).find((x) => x.name === key);
    if (!a || a.value === undefined) return '–';
    const v = displayValue(props ? props[key] : null, a.value).split('\n')[0].trim();
    return v === '' ? '–' : v;
  });
}
