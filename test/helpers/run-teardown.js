// jest's globalTeardown: removes the run's shared folders (run-setup.js).
/* eslint-disable @typescript-eslint/no-require-imports */
const promToolsResults = require('./prom-tools-results');
const openApiDocument = require('./openapi-document');
/* eslint-enable @typescript-eslint/no-require-imports */

module.exports = () => {
  promToolsResults.teardown();
  openApiDocument.teardown();
};
