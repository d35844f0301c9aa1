// SPDX-License-Identifier: MIT
// orval: two clients from the file run.sh names, its fetch client and its
// default axios client. The fetch client's generated URLs are relative, so
// it is given orval's documented custom-fetch mutator (src/orval-fetch.ts)
// that prefixes the server's base URL; the axios client uses axios's own
// defaults.baseURL.
module.exports = {
  fetch: {
    input: { target: process.env.CFS_SPEC },
    output: {
      target: `${process.env.CFS_ORVAL_OUT}/fetch/api.ts`,
      client: 'fetch',
      mode: 'single',
      override: { mutator: { path: `${process.env.CFS_ORVAL_MUTATOR}`, name: 'orvalFetch', extension: '.js' } },
    },
  },
  axios: {
    input: { target: process.env.CFS_SPEC },
    output: { target: `${process.env.CFS_ORVAL_OUT}/axios/api.ts`, client: 'axios', mode: 'single' },
  },
};
