it('probe', () => {
  process.stderr.write(`PROBE ${JSON.stringify(process.env.X)}\n`);
});
