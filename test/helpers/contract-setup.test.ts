import request from 'supertest';

describe('contract-setup', () => {
  it("has patched supertest's answer check by the time a suite imports supertest", () => {
    const { Test } = request as unknown as { Test: { prototype: { assert: () => void } } };
    expect(String(Test.prototype.assert)).toContain('contractProblem');
  });
});
