// SPDX-License-Identifier: MIT
// orval-fetch.ts - the custom fetch orval's fetch client calls (orval's
// "custom-fetch" mutator, as its documentation gives it): the request goes
// to the base URL set with setOrvalBaseUrl, and the answer becomes the
// { data, status, headers } the generated response types describe.
let base = '';

export const setOrvalBaseUrl = (url: string): void => {
  base = url;
};

// The last raw Response, for the flow's Violations check.
export let lastResponse: Response | undefined;

export const orvalFetch = async <T>(url: string, options: RequestInit): Promise<T> => {
  const response = await fetch(`${base}${url}`, options);
  lastResponse = response;
  const text = [204, 205, 304].includes(response.status) ? '' : await response.text();
  const type = response.headers.get('content-type') ?? '';
  const data: unknown = text && type.includes('json') ? JSON.parse(text) : text;
  return { data, status: response.status, headers: response.headers } as T;
};
