import type { ToolName } from '../config/index.js';
import { bashTool } from './bash.js';
import { fileTools } from './files.js';
import { memoryTools } from './memory.js';
import { messagingTools } from './messaging.js';
import type { Tool } from './tool.js';

/** Every tool the bridge implements, by name. Agents pick theirs with `tools:` in their file. */
const TOOLS = new Map<string, Tool>(
  [bashTool, ...fileTools, ...messagingTools, ...memoryTools].map((tool) => [tool.name, tool]),
);

/** The tools an agent has; names listed in config but not implemented yet are left out. */
export function toolsFor(names: readonly ToolName[]): Tool[] {
  return names.map((name) => TOOLS.get(name)).filter((tool): tool is Tool => tool !== undefined);
}
