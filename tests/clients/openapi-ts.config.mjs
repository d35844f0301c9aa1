// SPDX-License-Identifier: MIT
// @hey-api/openapi-ts: the fetch client, generated from the file run.sh
// names, with .js in relative imports so that Node runs the compiled code.
export default {
  input: process.env.CFS_SPEC,
  output: { path: process.env.CFS_HEY_OUT, importFileExtension: '.js' },
  plugins: ['@hey-api/client-fetch'],
  logs: { file: false },
};
