import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateBudget, DeleteBudget, GetBudget, ListBudgets } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { BudgetBody, BudgetPage, CreateBudgetRequest, toBudgetBody } from './billing.dto';

@ApiTags('billing')
@ApiBearerAuth()
@Access('member')
@Controller('v1/budgets')
export class BudgetsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('billing.manage')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a budget of the organization, a Bot or a member',
    description:
      'Money (`limitMicros`) or a token quota (`limitTokens`), exactly one; per UTC day, month or in total, counting spending from before it was created. ' +
      'Every model call reserves its estimate against it before sending, with `max_tokens` lowered to what this budget, the others that apply and the credits still afford ' +
      '(never below OPENBOT_MODEL_CALL_MIN_TOKENS); a Turn whose next call cannot reserve even that ends with `stop: "budget"`, ' +
      'and a message finding it exhausted answers 402 BudgetExceeded.',
  })
  @ApiCreatedResponse({ type: BudgetBody })
  @ApiErrors(400, 401, 403)
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateBudgetRequest): Promise<BudgetBody> {
    const budget = await this.commands.execute(
      new CreateBudget(caller, {
        scope: { kind: body.scope.kind, id: body.scope.id ?? null },
        period: body.period,
        limitMicros: body.limitMicros ?? null,
        limitTokens: body.limitTokens ?? null,
      }),
    );
    return toBudgetBody(budget);
  }

  @Get()
  @Requires('usage.read')
  @ApiOperation({ summary: "List the organization's budgets, oldest first, with their current period's spending" })
  @ApiPageQuery()
  @ApiOkResponse({ type: BudgetPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<BudgetPage> {
    const page = await this.queries.execute(new ListBudgets(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toBudgetBody), next: page.next };
  }

  @Get(':id')
  @Requires('usage.read')
  @ApiOperation({ summary: 'Read one budget with what it spent and holds in the current period' })
  @ApiOkResponse({ type: BudgetBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<BudgetBody> {
    return toBudgetBody(await this.queries.execute(new GetBudget(caller, id)));
  }

  @Delete(':id')
  @Requires('billing.manage')
  @ApiOperation({ summary: 'Delete a budget' })
  @ApiOkResponse({ type: BudgetBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<BudgetBody> {
    return toBudgetBody(await this.commands.execute(new DeleteBudget(caller, id)));
  }
}
