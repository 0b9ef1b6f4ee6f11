// The Redactor on its own: listed secrets, secrets from environment variables, and recognised keys and headers.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MIN_SECRET_LENGTH, REDACTED, Redactor } from 'troupe';

const KEY = 'sk-proj-0123456789abcdefABCDEF';

describe('a Redactor', () => {
  it('replaces every listed secret wherever it appears, the longest first', () => {
    const redactor = new Redactor({ secrets: ['hunter2-hunter2', 'hunter2-hunter2-and-more'], env: false });
    expect(redactor.redactText('a hunter2-hunter2-and-more b hunter2-hunter2 c')).toBe(`a ${REDACTED} b ${REDACTED} c`);
    expect(redactor.secrets).toEqual(['hunter2-hunter2-and-more', 'hunter2-hunter2']);
  });

  it('takes the values of variables named *_KEY, *_TOKEN and *_SECRET, skipping short values and other names', () => {
    const redactor = new Redactor({
      env: { MY_API_KEY: 'value-of-the-key', GH_TOKEN: 'ghp_tokentokentoken', APP_SECRET: 'shh-very-secret', DEBUG_KEY: '1', HOME: '/home/someone' },
    });
    expect([...redactor.secrets].sort()).toEqual(['ghp_tokentokentoken', 'shh-very-secret', 'value-of-the-key']);
    expect(redactor.redactText('value-of-the-key, ghp_tokentokentoken, shh-very-secret, 1, /home/someone')).toBe(
      `${REDACTED}, ${REDACTED}, ${REDACTED}, 1, /home/someone`,
    );
  });

  it('treats characters of regular expressions in a secret as plain text', () => {
    const redactor = new Redactor({ secrets: ['a.b*c+d?(e)[f]'], env: false });
    expect(redactor.redactText('x a.b*c+d?(e)[f] y aXbbcd')).toBe(`x ${REDACTED} y aXbbcd`);
  });

  it('refuses a listed secret shorter than the minimum, or one that is not a string', () => {
    expect(() => new Redactor({ secrets: ['short'], env: false })).toThrow(ConfigurationError);
    expect(() => new Redactor({ secrets: [42 as unknown as string], env: false })).toThrow(ConfigurationError);
    expect(() => new Redactor({ secrets: 'not-a-list-at-all' as unknown as string[], env: false })).toThrow(ConfigurationError);
    expect(() => new Redactor({ secrets: ['x'.repeat(MIN_SECRET_LENGTH)], env: false })).not.toThrow();
  });

  it('recognises API keys and Authorization header values without being told', () => {
    const redactor = new Redactor({ env: false });
    expect(redactor.redactText(`key=${KEY}.`)).toBe(`key=${REDACTED}.`);
    expect(redactor.redactText(`Authorization: Bearer ${KEY}\nAccept: json`)).toBe(`Authorization: ${REDACTED}\nAccept: json`);
    expect(redactor.redactText('{"authorization":"Basic dXNlcjpwYXNz","accept":"json"}')).toBe(`{"authorization":"${REDACTED}","accept":"json"}`);
    expect(redactor.redactText('x-api-key: abcdefgh12345678')).toBe(`x-api-key: ${REDACTED}`);
    expect(redactor.redactText('sent with bearer eyJhbGciOiJIUzI1NiJ9.e30.sig')).toBe(`sent with bearer ${REDACTED}`);
  });

  it('leaves ordinary text alone: short sk- words, the word bearer, authorization in prose', () => {
    const redactor = new Redactor({ env: false });
    for (const text of ['use sk-learn', 'task-1234567890abcdefghij', 'the Bearer of news', 'authorization failed', 'ask-me']) {
      expect(redactor.redactText(text)).toBe(text);
    }
  });

  it('redacts plain JSON deeply, copying only what changes', () => {
    const redactor = new Redactor({ secrets: ['the-secret-value'], env: false });
    const clean = { type: 'tool.result', n: 1, nested: { list: ['a', { b: 'c' }] }, none: null };
    expect(redactor.redact(clean)).toBe(clean);
    const shared = { untouched: 'yes' };
    const dirty = { message: 'has the-secret-value', list: ['ok', 'the-secret-value'], shared, at: 3 };
    const redacted = redactor.redact(dirty);
    expect(redacted).toEqual({ message: `has ${REDACTED}`, list: ['ok', REDACTED], shared: { untouched: 'yes' }, at: 3 });
    expect(redacted.shared).toBe(shared);
    expect(dirty.message).toBe('has the-secret-value'); // the original is not changed
  });

  it('leaves values that are not plain JSON as they are', () => {
    const redactor = new Redactor({ secrets: ['the-secret-value'], env: false });
    const error = new Error('the-secret-value');
    expect(redactor.redact(error)).toBe(error);
    expect(redactor.redact(7)).toBe(7);
  });
});
