import type { Command } from 'commander';
import type { Act } from '../action.ts';
import { EXIT } from '../exit-codes.ts';
import type { Output } from '../output/output.ts';
import { modelsText } from './models-text.ts';

/** `switchyard models`: what an agent job of this team may name as `--model`, before it is refused. */
export function addModelsCommand(program: Command, act: Act, out: Output): void {
  program
    .command('models')
    .description(
      "the model providers this team's agent jobs may name, whose keys they use, and the default model",
    )
    .action(
      act(async (client) => {
        const choices = await client.listModels();
        out.result(choices, () => modelsText(choices));
        return EXIT.ok;
      }),
    );
}
