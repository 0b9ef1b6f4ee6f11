import type { TroupeEvent } from '../events/events.js';
import type { LiveAgent } from './LiveTree.js';
import { agentTitle, elapsed, formatDuration, formatFigures, outcomeLine, toolLine } from './liveFormat.js';

/**
 * One plain line for an event worth reading, for output that is not a terminal (CI logs, pipes): an agent spawned
 * (`► name (description)`, indented under its parent), a tool call that ended (`✓ grep {…} 3ms`), a delegation
 * waiting for a person, an agent restarted or escalating its failure, an agent that finished with its figures and the first line of its answer. Other events give
 * undefined. Lines name the agent by its tree label (`trader#12` when several share a name), since the lines of
 * agents running side by side interleave. No control codes: text from models is cleaned first.
 *
 * @param node the event's node, after the event was applied to the tree (`LiveTree.apply` returns it).
 */
export function plainEventLine(event: TroupeEvent, node: LiveAgent): string | undefined {
  const indent = '  '.repeat(node.depth);
  switch (event.type) {
    case 'agent.spawned':
      return `${indent}${agentTitle(node, node.label)}${event.resumed ? ' (resumed)' : ''}`;
    case 'tool.result':
    case 'tool.denied':
    case 'tool.wait_ended': {
      if (event.type === 'tool.result' && event.waiting) return undefined; // it ends with its tool.wait_ended
      // The call this event ended (a model may give the calls of different turns the same id), kept in the node's
      // latest calls or not (a turn wider than they are).
      const call = node.lastEnded?.callId === event.callId ? node.lastEnded : node.tools.findLast((candidate) => candidate.callId === event.callId);
      if (!call || (event.type === 'tool.result' && node.children.some((child) => child.toolCallId === call.callId))) return undefined;
      return `${indent}  ${node.label} ${toolLine(call)}`;
    }
    case 'agent.restarted':
      return `${indent}↻ ${node.label} restarted (attempt ${event.attempt}) after ${event.reason}${event.by ? ' of a sibling (one-for-all)' : ''}`;
    case 'agent.escalated':
      return `${indent}⇑ ${node.label} escalated its failure (${event.refused ?? `${event.restarts} restarts within ${event.withinMs} ms`})`;
    case 'approval.requested':
      return `${indent}  ${node.label} awaits approval (${event.risk} risk)`;
    case 'agent.completed':
    case 'agent.failed': {
      const mark = event.type === 'agent.completed' ? '✓' : '✗';
      const how = event.type === 'agent.completed' ? 'done' : `failed (${event.reason})`;
      const time = formatDuration(elapsed(node, event.at)); // over all its runs, as its figures
      const figures = node.group ? '' : ` • ${formatFigures(node.figures)}`;
      return `${indent}${mark} ${node.label} ${how} ${time}${figures} ⎿ ${outcomeLine(node)}`;
    }
    default:
      return undefined;
  }
}
