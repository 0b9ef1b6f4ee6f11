import { describe, expect, it } from 'vitest';
import { AgentFileError, parseAgentFile } from 'troupe';

const file = (frontmatter: string, body = 'You review code carefully.') => `---\n${frontmatter}\n---\n${body}\n`;

describe('parseAgentFile', () => {
  it('reads every field, with tools and examples as YAML lists, and the body as the system prompt', () => {
    const definition = parseAgentFile(
      'agents/reviewer.md',
      file(
        [
          'name: reviewer',
          'description: Reviews code for bugs.',
          'tools:',
          '  - read_file',
          '  - grep',
          'model: gpt-4o-mini',
          'temperature: 0.2',
          'maxTurns: 6',
          'role: read',
          'shareContext: 4',
          'examples:',
          '  - Review src/auth.ts',
          'color: purple',
        ].join('\n'),
        '# Reviewer\n\nYou review code carefully.',
      ),
    );
    expect(definition).toEqual({
      name: 'reviewer',
      description: 'Reviews code for bugs.',
      systemPrompt: '# Reviewer\n\nYou review code carefully.',
      tools: ['read_file', 'grep'],
      model: 'gpt-4o-mini',
      temperature: 0.2,
      maxTurns: 6,
      role: 'read',
      shareContext: 4,
      examples: ['Review src/auth.ts'],
    });
  });

  it('reads the messaging fields: resident, subscribe, canMessage, inbox and historyLimit', () => {
    const definition = parseAgentFile(
      'agents/trader.md',
      file(
        [
          'name: trader',
          'description: Trades.',
          'tools: publish, wait_for_messages',
          'resident: true',
          'subscribe: market, news',
          'canMessage:',
          '  - auctioneer',
          '  - topic:orders',
          'inbox:',
          '  capacity: 16',
          '  overflow: drop-oldest',
          'historyLimit: 6',
        ].join('\n'),
      ),
    );
    expect(definition).toMatchObject({
      resident: true,
      subscribe: ['market', 'news'],
      canMessage: ['auctioneer', 'topic:orders'],
      inbox: { capacity: 16, overflow: 'drop-oldest' },
      historyLimit: 6,
    });
    expect(() => parseAgentFile('agents/t.md', file('name: t\ndescription: T.\ninbox:\n  overflow: spill'))).toThrow(
      expect.objectContaining({ field: 'inbox.overflow' }),
    );
    expect(() => parseAgentFile('agents/t.md', file('name: t\ndescription: T.\nhistoryLimit: 0'))).toThrow(AgentFileError);
  });

  it('reads retry: tries in all and the waits in ms, each field checked', () => {
    const definition = parseAgentFile('agents/w.md', file('name: w\ndescription: W.\nretry:\n  attempts: 5\n  maxMs: 10000'));
    expect(definition.retry).toEqual({ attempts: 5, maxMs: 10_000 });
    expect(() => parseAgentFile('agents/w.md', file('name: w\ndescription: W.\nretry:\n  attempts: 0'))).toThrow(
      expect.objectContaining({ field: 'retry.attempts' }),
    );
    expect(() => parseAgentFile('agents/w.md', file('name: w\ndescription: W.\nretry:\n  baseMs: -5'))).toThrow(
      expect.objectContaining({ field: 'retry.baseMs' }),
    );
  });

  it('refuses a field of retry, restartIntensity or inbox it does not read (the default would stay in force), naming the one meant', () => {
    const parse = (yaml: string) => () => parseAgentFile('agents/w.md', file(`name: w\ndescription: W.\n${yaml}`));
    expect(parse('retry:\n  maxAttempts: 5')).toThrow(AgentFileError);
    expect(parse('retry:\n  maxAttempts: 5')).toThrow(
      'agents/w.md: retry: unknown field "maxAttempts" (did you mean "attempts"?); its fields are attempts, baseMs and maxMs',
    );
    expect(parse('restartIntensity:\n  maxs: 2')).toThrow(expect.objectContaining({ field: 'restartIntensity' }));
    expect(parse('inbox:\n  capcity: 4')).toThrow('inbox: unknown field "capcity" (did you mean "capacity"?); its fields are capacity and overflow');
    expect(parse('inbox:\n  capacity: 4\n  overflow: drop-oldest').call(undefined).inbox).toEqual({ capacity: 4, overflow: 'drop-oldest' });
  });

  it('takes tools as one comma-separated string, as in .claude/agents files', () => {
    const definition = parseAgentFile('a.md', file('name: a\ndescription: A.\ntools: Read, Grep,  Glob'));
    expect(definition.tools).toEqual(['Read', 'Grep', 'Glob']);
  });

  it('pools an agent whose lifecycle is persistent (or that says persist: true)', () => {
    expect(parseAgentFile('a.md', file('name: a\ndescription: A.\nlifecycle: persistent')).persist).toBe(true);
    expect(parseAgentFile('a.md', file('name: a\ndescription: A.\npersist: true')).persist).toBe(true);
    expect(parseAgentFile('a.md', file('name: a\ndescription: A.\nlifecycle: temporary')).persist).toBeUndefined();
  });

  it.each([
    ['no frontmatter', 'Just a prompt.', 'frontmatter', /start with YAML frontmatter/],
    ['YAML that does not parse', file('name: a\ndescription: [unclosed'), 'frontmatter', /not valid YAML/],
    ['a list instead of fields', file('- a\n- b'), 'frontmatter', /mapping/],
    ['a bad name', file('name: Bad Name\ndescription: A.'), 'name', /lower-case/],
    ['no description', file('name: a'), 'description', /./],
    ['an empty description', file('name: a\ndescription: "  "'), 'description', /empty/],
    ['a temperature out of range', file('name: a\ndescription: A.\ntemperature: 5'), 'temperature', /./],
    ['maxTurns that is not a whole number', file('name: a\ndescription: A.\nmaxTurns: 2.5'), 'maxTurns', /./],
    ['an unknown role', file('name: a\ndescription: A.\nrole: admin'), 'role', /./],
    ['tools that are not names', file('name: a\ndescription: A.\ntools: 7'), 'tools', /./],
    ['an empty body', file('name: a\ndescription: A.', '   '), 'body', /system prompt/],
  ])('refuses %s, naming the file and the field', (_label, text, field, message) => {
    let caught: unknown;
    try {
      parseAgentFile('agents/a.md', text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AgentFileError);
    expect(caught).toMatchObject({ code: 'invalid_agent_file', file: 'agents/a.md', field });
    expect((caught as Error).message).toMatch(new RegExp(`^agents/a\\.md: ${field}: `));
    expect((caught as Error).message).toMatch(message);
  });
  it('says where YAML that does not parse goes wrong as a line of the file, which the frontmatter starts on line 2 of', () => {
    // ---                      line 1
    // name: a                  line 2
    // description: [unclosed   line 3: the bracket is never closed
    expect(() => parseAgentFile('agents/a.md', file('name: a\ndescription: [unclosed'))).toThrow(
      /^agents\/a\.md: frontmatter: not valid YAML: Flow sequence .* end with a \] at line 3, column 23$/,
    );
    // A CRLF file and a byte-order mark count the same lines.
    expect(() => parseAgentFile('agents/a.md', '\uFEFF---\r\nname: a\r\ndescription: A.\r\n  bad: indent\r\n---\r\nBody.\r\n')).toThrow(/ at line 3, column 14$/);
  });
  it("reads mcpServers in Claude Code's shapes: a mapping of servers by name, or a list of names and mappings", () => {
    const mapped = parseAgentFile(
      'agents/a.md',
      file(
        [
          'name: a',
          'description: Reads files.',
          'tools: files:read_file, docs:*',
          'mcpServers:',
          '  files:',
          '    command: npx',
          '    args: ["-y", "@modelcontextprotocol/server-filesystem", "."]',
          '    env: { DEBUG: "1" }',
          '  docs:',
          '    type: http',
          '    url: http://127.0.0.1:8080/mcp',
        ].join('\n'),
      ),
    );
    expect(mapped.tools).toEqual(['files:read_file', 'docs:*']);
    expect(mapped.mcpServers).toEqual({
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], env: { DEBUG: '1' } },
      docs: { type: 'http', url: 'http://127.0.0.1:8080/mcp' },
    });
    const listed = parseAgentFile('agents/b.md', file(['name: b', 'description: B.', 'mcpServers:', '  - files', '  - git:', '      command: uvx'].join('\n')));
    expect(listed.mcpServers).toEqual(['files', { git: { command: 'uvx' } }]);
  });

  it('refuses an mcpServers entry that is neither a command nor an http url, naming the field', () => {
    const bad = () => parseAgentFile('agents/c.md', file(['name: c', 'description: C.', 'mcpServers:', '  files:', '    args: [x]'].join('\n')));
    expect(bad).toThrow(AgentFileError);
    expect(bad).toThrow(/mcpServers/);
  });

  it('says what is wrong with an mcpServers entry, not only that the input is invalid', () => {
    const entry = (lines: string[]) => () => parseAgentFile('agents/d.md', file(['name: d', 'description: D.', 'mcpServers:', ...lines].join('\n')));
    const rule = 'an MCP server name must be 1-64 letters, digits, "_" or "-"';

    expect(entry(['  bad name:', '    command: node'])).toThrow(`mcpServers.bad name: ${rule}`);
    expect(entry(['  - bad name'])).toThrow(`mcpServers.0: ${rule}`);
    expect(entry(['  files:', '    args: [x]'])).toThrow('mcpServers.files: must be { command, args?, env? } (stdio) or { type: "http", url }');
  });

  it('names the types a field of two shapes takes when a value is neither', () => {
    const bad = () => parseAgentFile('agents/e.md', file(['name: e', 'description: E.', 'tools: 5'].join('\n')));
    expect(bad).toThrow('agents/e.md: tools: Invalid input: expected array or string');
  });
});
