import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SAMPLE_CONTENT_DIR } from '../src/config.js';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('gives the documented defaults on an empty environment, frozen', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      databaseUrl: 'sqlite:./data/guides.db',
      port: 3000,
      host: '127.0.0.1',
      publicBaseUrl: 'http://localhost:3000',
      contentDir: SAMPLE_CONTENT_DIR,
      cursorSecrets: [],
      rateLimitPerMinute: 600,
      trustProxy: false,
      logLevel: 'info',
    });
    expect(config.redisUrl).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('derives the public base URL from PORT and drops trailing slashes', () => {
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/guides//' }).publicBaseUrl).toBe('https://api.example.com/guides');
  });

  it('splits CURSOR_SECRET into keys, the first one signing', () => {
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    expect(loadConfig({ CURSOR_SECRET: ` ${a} , ${b} ` }).cursorSecrets).toEqual([a, b]);
  });

  it('reads TRUST_PROXY as off or a list of addresses, never "true"', () => {
    expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8']);
    expect(problemsOf({ TRUST_PROXY: 'true' })).toEqual([expect.stringMatching(/^TRUST_PROXY must be/)]);
  });

  it('reads FAST_PATH as on unless 0, and refuses anything else', () => {
    expect(loadConfig({}).fastPath).toBe(true);
    expect(loadConfig({ FAST_PATH: '1' }).fastPath).toBe(true);
    expect(loadConfig({ FAST_PATH: '0' }).fastPath).toBe(false);
    expect(problemsOf({ FAST_PATH: 'off' })).toEqual(['FAST_PATH must be a whole number from 0 to 1']);
  });

  it('resolves CONTENT_DIR against the working directory', () => {
    expect(loadConfig({ CONTENT_DIR: 'some/where' }).contentDir).toBe(path.resolve('some/where'));
  });

  it('reports every problem at once, naming the variable and never its value', () => {
    const secret = 'short-secret-value';
    const problems = problemsOf({
      DATABASE_URL: 'mysql://x',
      PORT: 'eighty',
      PUBLIC_BASE_URL: 'https://user:pw@example.com',
      CURSOR_SECRET: secret,
      REDIS_URL: 'http://redis',
      LOG_LEVEL: 'loud',
      RATE_LIMIT_PER_MINUTE: '-1',
    });
    const names = problems.map((p) => p.split(' ')[0]);
    expect(names).toEqual(
      expect.arrayContaining([
        'DATABASE_URL',
        'PORT',
        'PUBLIC_BASE_URL',
        'CURSOR_SECRET',
        'REDIS_URL',
        'LOG_LEVEL',
        'RATE_LIMIT_PER_MINUTE',
      ]),
    );
    expect(problems).toHaveLength(7);
    expect(problems.join('\n')).not.toContain(secret);
    expect(problems.join('\n')).not.toContain('pw@');
  });

  it('refuses numbers outside their range and non-decimal forms', () => {
    for (const value of ['65536', '1e3', '0x50', '+80', '-1', '3.5']) {
      expect(problemsOf({ PORT: value })).toEqual(['PORT must be a whole number from 0 to 65535']);
    }
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(problemsOf({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' })).toEqual([
      'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS',
    ]);
  });
});
